// The receiver embedded in an application: its log lines go through the named logger "webhooks"
// (webhooks/log.h), which the application replaces or silences; unconfigured, they go to stderr
// and nothing to stdout. A real Receiver on a SQLite file in a temporary directory.
#include <fcntl.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <sstream>

#include "receiver_support.h"
#include "support/log_lines.h"
#include "webhooks/log.h"

using namespace receiver_test;

namespace {

// Installs `replacement` as the libraries' logger while it lives, then puts the previous back.
class InstalledLogger {
 public:
  explicit InstalledLogger(std::shared_ptr<spdlog::logger> replacement)
      : previous_(webhooks::logger()) {
    webhooks::set_logger(std::move(replacement));
  }
  ~InstalledLogger() { webhooks::set_logger(previous_); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
};

// A real Receiver (SQLite file in a fresh temporary directory, fake clock) that handles event
// `id` twice: the handler runs once, the second delivery is answered as a duplicate.
void handle_twice(const std::string& label, const std::string& id) {
  FakeClock clock{kNow * 1000};
  Config config = test_config(clock);
  config.store = test::temp_dir(label) + "/receiver.db";
  Receiver receiver(config);
  const std::string body = event_body(id);
  int runs = 0;
  const Handler handler = [&](const Event&) {
    ++runs;
    return Reply{};
  };
  REQUIRE(receiver.handle(signed_headers(id, body), body, handler).status == 200);
  const Answer again = receiver.handle(signed_headers(id, body), body, handler);
  REQUIRE(again.status == 200);
  REQUIRE(header(again, "Idempotent-Replayed") == "true");
  REQUIRE(runs == 1);
}

// The receiver's line for `id` at `level` with `outcome`, without its "ts".
nlohmann::json webhook_line(const std::string& id, const std::string& level,
                            const std::string& outcome) {
  return {{"event", "webhook"},       {"consumer", "shop"}, {"event_id", id}, {"delivery_id", "d1"},
          {"type", "order.captured"}, {"outcome", outcome}, {"status", 200},  {"level", level}};
}

const std::regex kTs(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");

// The JSON message of `line` ("PREFIX{...}"), its "ts" checked and removed.
nlohmann::json message_of(const std::string& line, const std::string& prefix) {
  INFO(line);
  REQUIRE(line.rfind(prefix, 0) == 0);
  nlohmann::json message = nlohmann::json::parse(line.substr(prefix.size()));
  CHECK(std::regex_match(message.at("ts").get<std::string>(), kTs));
  message.erase("ts");
  return message;
}

using webhooks::test::lines_of;

// Forks; the child points stdout and stderr at `dir`/stdout and `dir`/stderr, runs `body` and
// leaves with _exit(0). Requires that the child exited 0.
template <typename Body>
void in_child(const std::string& dir, Body body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int out = ::open((dir + "/stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open((dir + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0) {
      ::_exit(90);
    }
    try {
      body();
    } catch (...) {
      ::_exit(91);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
}

}  // namespace

TEST_CASE("an embedder's logger (set_logger) gets the receiver's lines with its own pattern") {
  std::ostringstream out;
  auto mine = test::stream_logger("embedder", out, "[%n] [%l] %v", spdlog::level::debug);
  {
    InstalledLogger installed(mine);
    CHECK(webhooks::logger() == mine);
    CHECK(webhooks::log_enabled(spdlog::level::debug));
    handle_twice("logging-embedder", "evt_embedded");
  }
  CHECK(webhooks::logger() != mine);  // the previous logger is back
  const std::vector<std::string> lines = lines_of(out.str());
  REQUIRE(lines.size() == 2);
  CHECK(message_of(lines[0], "[embedder] [debug] ") ==
        webhook_line("evt_embedded", "debug", "handled"));
  CHECK(message_of(lines[1], "[embedder] [info] ") ==
        webhook_line("evt_embedded", "info", "duplicate"));
}

TEST_CASE("a silenced logger writes nothing: a logger at level off, or set_logger(nullptr)") {
  std::ostringstream out;
  auto quiet = std::make_shared<spdlog::logger>(
      "quiet", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  quiet->set_level(spdlog::level::off);
  {
    InstalledLogger installed(quiet);
    CHECK_FALSE(webhooks::log_enabled(spdlog::level::err));
    handle_twice("logging-off", "evt_quiet");
    webhooks::log_event(spdlog::level::critical, {{"event", "not written"}});
  }
  CHECK(out.str().empty());

  const std::string dir = test::temp_dir("logging-nullptr");
  in_child(dir, [&] {
    webhooks::set_logger(nullptr);
    if (webhooks::log_enabled(spdlog::level::critical)) ::_exit(92);
    handle_twice("logging-nullptr-child", "evt_silenced");
    webhooks::log_event(spdlog::level::critical, {{"event", "not written"}});
  });
  CHECK(test::read_file(dir + "/stdout").empty());
  CHECK(test::read_file(dir + "/stderr").empty());
}

TEST_CASE(
    "unconfigured: the logger \"webhooks\" writes bare JSON lines at info to stderr, none to "
    "stdout") {
  const std::shared_ptr<spdlog::logger> logger = webhooks::logger();
  CHECK(logger->name() == "webhooks");
  CHECK(spdlog::get("webhooks") == logger);  // registered with spdlog
  CHECK(logger->level() == spdlog::level::info);
  const std::string dir = test::temp_dir("logging-default");
  in_child(dir, [] { handle_twice("logging-default-child", "evt_default"); });
  CHECK(test::read_file(dir + "/stdout").empty());
  // The handled line is at debug, below info; the duplicate's is the only one.
  const std::vector<std::string> lines = lines_of(test::read_file(dir + "/stderr"));
  REQUIRE(lines.size() == 1);
  CHECK(message_of(lines[0], "") == webhook_line("evt_default", "info", "duplicate"));
}

TEST_CASE(
    "a duplicate with the same body is answered from the replay cache before its body is "
    "scanned, logged with the handled delivery's type; another body is still checked") {
  std::ostringstream out;
  auto mine = test::stream_logger("cache", out, "%v", spdlog::level::info);
  InstalledLogger installed(mine);
  FakeClock clock{kNow * 1000};
  Config config = test_config(clock);
  config.store = test::temp_dir("logging-cache") + "/receiver.db";
  Receiver receiver(config);
  int runs = 0;
  const Handler handler = [&](const Event&) {
    ++runs;
    return Reply{};
  };
  // No "type" in the body: the type comes from the header of each delivery the receiver scans.
  const std::string body = R"({"id":"evt_untyped","data":{"amount":1000}})";
  Headers first = signed_headers("evt_untyped", body);
  first.add("webhook-event-type", "order.created");
  REQUIRE(receiver.handle(first, body, handler).status == 200);
  Headers again = signed_headers("evt_untyped", body, kNow, kSecret, "d2");
  again.add("webhook-event-type", "order.renamed");
  const Answer replayed = receiver.handle(again, body, handler);
  CHECK(replayed.status == 200);
  CHECK(header(replayed, "Idempotent-Replayed") == "true");
  CHECK(replayed.body == "{\"received\":true}");
  // Another body under the same id: scanned first, so a broken one is 400, a valid one 422.
  const std::string broken = R"({"id":"evt_untyped",)";
  CHECK(receiver.handle(signed_headers("evt_untyped", broken, kNow, kSecret, "d3"), broken, handler)
            .status == 400);
  const std::string other = R"({"id":"evt_untyped","type":"order.other"})";
  CHECK(receiver.handle(signed_headers("evt_untyped", other, kNow, kSecret, "d4"), other, handler)
            .status == 422);
  CHECK(runs == 1);
  const std::vector<std::string> lines = lines_of(out.str());
  REQUIRE(lines.size() == 3);
  nlohmann::json duplicate = message_of(lines[0], "");
  CHECK(duplicate == nlohmann::json{{"event", "webhook"},
                                    {"consumer", "shop"},
                                    {"event_id", "evt_untyped"},
                                    {"delivery_id", "d2"},
                                    {"type", "order.created"},
                                    {"outcome", "duplicate"},
                                    {"status", 200},
                                    {"level", "info"}});
  CHECK(message_of(lines[1], "").at("outcome") == "invalid_json");
  nlohmann::json reused = message_of(lines[2], "");
  CHECK(reused.at("outcome") == "event_id_reused");
  CHECK(reused.at("type") == "order.other");
  CHECK(reused.at("status") == 422);
}
