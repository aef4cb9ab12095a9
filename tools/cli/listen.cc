// webhooks listen: a local receiver built on the receiver library with SQLite dedup. Prints one
// line per delivery; optionally forwards new events and captures them (each event once).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>

#include "capture.h"
#include "cli.h"
#include "webhooks/app/deprecated_flags.h"
#include "webhooks/app/server.h"
#include "webhooks/json_parse.h"
#include "webhooks/receiver/http_server.h"
#include "webhooks/wire.h"

namespace webhooks::cli {
namespace {

struct ListenArgs {
  std::string listen = "127.0.0.1:8784", db = "./listen.db", consumer = "webhooks-cli";
  std::string forward, capture;
  std::vector<std::string> secrets;
  std::int64_t tolerance = 300;
};

// Registers the `listen` subcommand's options (in --help order) on `cmd`.
void add_listen_options(CLI::App& cmd, ListenArgs& a) {
  cmd.add_option("--listen", a.listen, "HOST:PORT (port 0 picks a free one)")
      ->check(app::listen_address())
      ->capture_default_str();
  app::add_secret_option(cmd,
                         {"--secret", "WEBHOOKS_SECRET", "whsec_… secret; repeat for rotation",
                          app::signing_secret(), true},
                         a.secrets);
  cmd.add_option("--db", a.db, "SQLite file (or postgres:// URL) for dedup records")
      ->capture_default_str();
  cmd.add_option("--consumer", a.consumer, "dedup scope")->capture_default_str();
  app::add_whole_seconds(cmd, "--tolerance", a.tolerance, "timestamp tolerance, whole seconds");
  cmd.add_option("--forward", a.forward, "also POST each new event, headers and body, to this URL");
  cmd.add_option("--capture", a.capture,
                 "append each new event (the delivery handled first, as `new`) as a JSON line to "
                 "FILE; duplicates, failed and rejected deliveries are not recorded, so replaying "
                 "the file to this listener leaves it unchanged; a line that cannot be written "
                 "(a full disk) fails the delivery with 500, so the sender retries it");
}

std::string error_code_of(const receiver::Answer& answer) {
  try {
    const auto body = parse_json(answer.body);
    if (body.contains("error")) return body["error"].value("code", "");
  } catch (const std::exception&) {
  }
  return "";
}

// Where --forward posts each new event: no client when the flag is not given.
struct Forward {
  std::unique_ptr<httplib::Client> client;
  std::string path = "/";
};

Forward open_forward(const std::string& url) {
  Forward forward;
  if (url.empty()) return forward;
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) throw UsageError("--forward must be an http:// URL");
  const std::size_t slash = url.find('/', scheme + 3);
  forward.client = std::make_unique<httplib::Client>(url.substr(0, slash));
  if (slash != std::string::npos) forward.path = url.substr(slash);
  forward.client->set_tcp_nodelay(true);
  return forward;
}

// The listener's state shared by the server's threads; `out` serialises stdout and the capture.
struct Listener {
  receiver::Receiver& rx;
  Forward forward;
  std::string capture_path;
  std::ofstream capture;
  std::mutex out;
};

void open_capture(Listener& l) {
  if (l.capture_path.empty()) return;
  l.capture.open(l.capture_path, std::ios::app | std::ios::binary);
  if (!l.capture) throw UsageError("cannot open " + l.capture_path);
}

// The names the delivery's signed headers came under: webhook-* or the Svix service's svix-*
// (choose_signed_header_names; a mix never reaches a handler).
SignedHeaderNames received_names(const receiver::Headers& headers) {
  SignedHeaderNames names;
  choose_signed_header_names([&](std::string_view name) { return headers.get(name).has_value(); },
                             names);
  return names;
}

// Appends the new event's line before its record commits, inside the handler: a line that
// cannot be written (a full disk) fails the delivery (500, the sender retries) instead of
// being lost behind a 200, and what was partly written is cut off again.
void append_capture(Listener& l, const receiver::Headers& headers, const std::string& body) {
  // Kept under the webhook-* names whichever family came (the signature scheme is the same), so
  // that `replay --capture` sends it as it sends any.
  const SignedHeaderNames from = received_names(headers);
  const std::pair<std::string_view, std::string_view> kept[] = {
      {kHeaderId, from.id},
      {kHeaderTimestamp, from.timestamp},
      {kHeaderSignature, from.signature},
      {kHeaderDeliveryId, kHeaderDeliveryId},
      {kHeaderEventType, kHeaderEventType}};
  nlohmann::json h;
  for (const auto& [name, read_as] : kept) {
    if (auto v = headers.get(read_as)) h[std::string(name)] = std::string(*v);
  }
  const std::string line = capture_line(h, body) + "\n";
  std::lock_guard lock(l.out);
  l.capture.clear();
  std::error_code size_error;
  const std::uintmax_t before = std::filesystem::file_size(l.capture_path, size_error);
  l.capture << line;
  l.capture.flush();
  if (l.capture) return;
  l.capture.clear();
  std::error_code ignored;  // opened for appending: the next line goes to the (new) end
  if (!size_error) std::filesystem::resize_file(l.capture_path, before, ignored);
  std::cerr << "webhooks listen: cannot append to " << l.capture_path
            << " (disk full?); the delivery is answered 500 and will be retried" << std::endl;
  throw std::runtime_error("cannot append to the capture file");
}

// Posts a new event's webhook-* (or svix-*) headers and body to --forward; its answer becomes the
// reply.
receiver::Reply forward_event(const Forward& forward, const httplib::Request& req) {
  const auto starts_with = [](std::string_view name, std::string_view lower_prefix) {
    return name.size() >= lower_prefix.size() &&
           receiver::Headers::same_name(name.substr(0, lower_prefix.size()), lower_prefix);
  };
  httplib::Headers copy;
  for (const auto& [name, value] : req.headers) {
    if (starts_with(name, "webhook-") || starts_with(name, "svix-")) copy.emplace(name, value);
  }
  const auto r = forward.client->Post(forward.path, copy, req.body, "application/json");
  if (!r) return {502, "{\"error\":{\"code\":\"forward_failed\",\"message\":\"no answer\"}}"};
  return {r->status, r->body};
}

// The handler of a new event: forwards it when asked, then captures it when it succeeded.
receiver::Reply handle_new_event(Listener& l, const receiver::Headers& headers,
                                 const httplib::Request& req) {
  receiver::Reply reply;
  if (l.forward.client) reply = forward_event(l.forward, req);
  if (l.capture.is_open() && reply.status < 300) append_capture(l, headers, req.body);
  return reply;
}

// The last column of a delivery's line: new, failed (STATUS), duplicate or rejected: STATUS CODE.
std::string outcome_of(bool is_new, const receiver::Answer& answer) {
  const bool handled_now = is_new && answer.status < 300;  // the event's first success
  if (handled_now) return "new";
  if (is_new) return "failed (" + std::to_string(answer.status) + ")";
  if (answer.status < 300) return "duplicate";
  return "rejected: " + std::to_string(answer.status) + " " + error_code_of(answer);
}

void print_delivery(Listener& l, const receiver::Headers& headers, const std::string& outcome) {
  std::lock_guard lock(l.out);
  std::cout << headers.get(received_names(headers).id).value_or("-") << "  "
            << headers.get(kHeaderEventType).value_or("-") << "  "
            << headers.get(kHeaderDeliveryId).value_or("-") << "  " << outcome << std::endl;
}

void handle_delivery(Listener& l, const httplib::Request& req, httplib::Response& res) {
  const receiver::Headers headers = receiver::headers_of(req);
  bool is_new = false;
  const receiver::Answer answer =
      l.rx.handle(headers, req.body, [&](const receiver::Event&) -> receiver::Reply {
        is_new = true;
        return handle_new_event(l, headers, req);
      });
  print_delivery(l, headers, outcome_of(is_new, answer));
  receiver::write_answer(answer, res);
}

int run_listen(const ListenArgs& a) {
  // SIGTERM and SIGINT stop the server (exit 0); blocked before the receiver starts its
  // threads, which inherit the mask.
  app::block_stop_signals();
  receiver::Config config;
  config.secrets = a.secrets;
  config.store = a.db;
  config.consumer = a.consumer;
  config.tolerance = std::chrono::seconds(a.tolerance);
  receiver::Receiver rx(config);
  Listener l{rx, open_forward(a.forward), a.capture, {}, {}};
  open_capture(l);

  http::Server server;
  receiver::limit_request_bodies(server, rx.config().max_body_bytes, nullptr, http::Bodies::json);
  server.Post(".*", [&l](const httplib::Request& req, httplib::Response& res) {
    handle_delivery(l, req, res);
  });
  const int port = app::bind_and_announce(server, app::parse_listen(a.listen));
  const app::StopOnSignal stop(server, port);
  server.listen_after_bind();
  return kOk;
}

}  // namespace

void add_listen(CLI::App& app, Action& action) {
  auto a = std::make_shared<ListenArgs>();
  CLI::App* cmd = app.add_subcommand("listen", "Receive deliveries locally: verify, dedup, print");
  add_listen_options(*cmd, *a);
  cmd->callback([a, &action] { action = [a] { return run_listen(*a); }; });
}

}  // namespace webhooks::cli
