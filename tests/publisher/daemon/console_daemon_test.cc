// The console's accountability through real daemons (docs/console.md, docs/security.md): a session
// signed out on one daemon is refused by another on the same database; --behind-tls-proxy makes
// the cookie Secure and expects an https:// origin on sign-in. SQLite and PostgreSQL.
#include <signal.h>

#include <catch2/catch.hpp>

#include "daemon_client.h"
#include "process.h"
#include "support/test_env.h"

namespace webhooks::test {
namespace {

std::vector<std::string> console_args(const std::string& db, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--listen",      "127.0.0.1:0", "--db",        db,
                                "--admin-token", kToken,        "--log-level", "warn"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Signs in on `port` with the admin token; the answer.
httplib::Result sign_in(int port, const httplib::Headers& headers = {}) {
  httplib::Client client("127.0.0.1", port);
  return client.Post("/console/login", headers, std::string("token=") + kToken,
                     "application/x-www-form-urlencoded");
}

// The page's CSRF token (meta csrf-token) of /console with `cookie`.
std::string csrf_of(int port, const httplib::Headers& cookie) {
  const std::string page = httplib::Client("127.0.0.1", port).Get("/console", cookie)->body;
  const std::string tag = R"(<meta name="csrf-token" content=")";
  const std::size_t at = page.find(tag);
  REQUIRE(at != std::string::npos);
  return page.substr(at + tag.size(), page.find('"', at + tag.size()) - at - tag.size());
}

TEST_CASE("a session signed out on one daemon is refused by another on the same database",
          "[daemon][console]") {
  const std::string db = database_target("console_sign_out");
  const std::string dir = temp_dir("publisherd-console-sign-out");
  Daemon a(console_args(db), dir);
  const int port_a = a.wait_listening();
  Daemon b(console_args(db), dir);
  const int port_b = b.wait_listening();

  const auto in = sign_in(port_a);
  REQUIRE(in);
  REQUIRE(in->status == 303);
  const std::string set = in->get_header_value("Set-Cookie");
  const httplib::Headers cookie{{"Cookie", set.substr(0, set.find(';'))}};
  httplib::Client on_b("127.0.0.1", port_b);
  CHECK(on_b.Get("/v1/endpoints", cookie)->status == 200);  // one token: B accepts A's session

  const auto out = httplib::Client("127.0.0.1", port_a)
                       .Post("/console/logout", cookie, "csrf=" + csrf_of(port_a, cookie),
                             "application/x-www-form-urlencoded");
  REQUIRE(out);
  CHECK(out->status == 303);
  const auto copied = on_b.Get("/v1/endpoints", cookie);
  REQUIRE(copied);
  CHECK(copied->status == 401);
  CHECK(error_code(copied) == "unauthorized");
  const auto page = on_b.Get("/console", cookie);
  CHECK(page->status == 303);
  CHECK(page->get_header_value("Location") == "/console/login");
  CHECK(a.kill_and_wait(SIGTERM) == 0);
  CHECK(b.kill_and_wait(SIGTERM) == 0);
}

TEST_CASE("--behind-tls-proxy: a Secure cookie, and sign-in only from the https:// origin",
          "[daemon][console]") {
  Daemon daemon(console_args(database_target("console_tls"), {"--behind-tls-proxy"}),
                temp_dir("publisherd-console-tls"));
  const int port = daemon.wait_listening();
  const std::string host = "127.0.0.1:" + std::to_string(port);
  const auto plain = sign_in(port, {{"Origin", "http://" + host}});
  REQUIRE(plain);
  CHECK(plain->status == 403);
  CHECK(plain->body.find("Refused: this form was posted from http://" + host +
                         ", not from this console (https://" + host + ").") != std::string::npos);
  const auto in = sign_in(port, {{"Origin", "https://" + host}});
  REQUIRE(in);
  CHECK(in->status == 303);
  CHECK(in->get_header_value("Set-Cookie")
            .ends_with("; Path=/; HttpOnly; SameSite=Strict; Secure; Max-Age=43200"));
  CHECK(daemon.kill_and_wait(SIGTERM) == 0);
}

TEST_CASE("named tokens: --admin-token NAME:TOKEN and --viewer-token; bad ones exit 2",
          "[daemon][console]") {
  const std::string dir = temp_dir("publisherd-named-tokens");
  Daemon daemon({"--listen", "127.0.0.1:0", "--db", database_target("named_tokens"),
                 "--admin-token", "alice:tok-a", "--admin-token", "tok-b", "--viewer-token",
                 "ops:tok-v", "--log-level", "warn"},
                dir);
  const int port = daemon.wait_listening();
  Client client(port);
  CHECK(client.get("/v1/endpoints", "tok-a")->status == 200);
  CHECK(client.get("/v1/endpoints", "tok-b")->status == 200);  // the bare one, named admin
  CHECK(client.get("/v1/endpoints", "tok-v")->status == 200);
  const auto refused = client.post("/v1/endpoints", {{"merchant_id", "m1"}}, "", "tok-v");
  REQUIRE(refused);
  CHECK(refused->status == 403);
  CHECK(
      refused->body ==
      R"x({"error":{"code":"forbidden","message":"the viewer token ops may only read (GET and HEAD)"}})x");
  CHECK(client.post("/v1/endpoints", {{"merchant_id", "m1"}}, "", "tok-a")->status == 400);
  CHECK(client.get("/v1/endpoints", "alice:tok-a")->status == 401);
  CHECK(daemon.kill_and_wait(SIGTERM) == 0);

  const auto exits_2 = [&](const std::vector<std::string>& args, const std::string& message) {
    const launcher::Finished run = launcher::run_to_end("webhooks-publisherd", args, dir);
    CHECK(run.exit_code == 2);
    CHECK(run.err == message + "\nRun with --help for more information.\n");
  };
  exits_2({"--admin-token", "alice:t1", "--viewer-token", "alice:t2"},
          "--admin-token/--viewer-token: the token name alice is given twice");
  exits_2({"--admin-token", "alice:t1", "--viewer-token", "bob:t1"},
          "--admin-token/--viewer-token: tokens alice and bob are the same");
  exits_2({"--admin-token", "al ice:t1"},
          "--admin-token: must be 1 to 4096 visible ASCII characters (no spaces or control "
          "characters)");
  exits_2({"--admin-token", "al/ice:t1"},
          "--admin-token: NAME in NAME:TOKEN must be 1 to 64 of A-Z a-z 0-9 _ . -");
  exits_2({"--viewer-token", "t1"}, "--viewer-token: must be NAME:TOKEN");
}

}  // namespace
}  // namespace webhooks::test
