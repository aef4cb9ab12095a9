// webhooks listen: a local receiver built on the receiver library with SQLite dedup. Prints one
// line per delivery; optionally forwards new events and captures them (each event once).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>

#include "capture.h"
#include "cli.h"
#include "webhooks/app/server.h"
#include "webhooks/json_parse.h"
#include "webhooks/receiver/http_server.h"
#include "webhooks/wire.h"

namespace webhooks::cli {
namespace {

std::string error_code_of(const receiver::Answer& answer) {
  try {
    const auto body = parse_json(answer.body);
    if (body.contains("error")) return body["error"].value("code", "");
  } catch (const std::exception&) {
  }
  return "";
}

}  // namespace

void add_listen(CLI::App& app, Action& action) {
  struct Args {
    std::string listen = "127.0.0.1:8784", db = "./listen.db", consumer = "webhooks-cli";
    std::string forward, capture;
    std::vector<std::string> secrets;
    std::int64_t tolerance = 300;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("listen", "Receive deliveries locally: verify, dedup, print");
  cmd->add_option("--listen", a->listen, "HOST:PORT (port 0 picks a free one)")
      ->check(app::listen_address())
      ->capture_default_str();
  app::add_secret_option(*cmd,
                         {"--secret", "WEBHOOKS_SECRET", "whsec_… secret; repeat for rotation",
                          app::signing_secret(), true},
                         a->secrets);
  cmd->add_option("--db", a->db, "SQLite file (or postgres:// URL) for dedup records")->capture_default_str();
  cmd->add_option("--consumer", a->consumer, "dedup scope")->capture_default_str();
  cmd->add_option("--tolerance", a->tolerance, "timestamp tolerance, whole seconds")
      ->check(app::duration(app::DurationUnit::whole_seconds))
      ->capture_default_str();
  cmd->add_option("--forward", a->forward, "also POST each new event, headers and body, to this URL");
  cmd->add_option("--capture", a->capture,
                  "append each new event (the delivery handled first, as `new`) as a JSON line to "
                  "FILE; duplicates, failed and rejected deliveries are not recorded, so replaying "
                  "the file to this listener leaves it unchanged; a line that cannot be written "
                  "(a full disk) fails the delivery with 500, so the sender retries it");
  cmd->callback([a, &action] {
    action = [a] {
      // SIGTERM and SIGINT stop the server (exit 0); blocked before the receiver starts its
      // threads, which inherit the mask.
      app::block_stop_signals();
      receiver::Config config;
      config.secrets = a->secrets;
      config.store = a->db;
      config.consumer = a->consumer;
      config.tolerance = std::chrono::seconds(a->tolerance);
      receiver::Receiver rx(config);
      std::unique_ptr<httplib::Client> forward;
      std::string forward_path = "/";
      if (!a->forward.empty()) {
        const std::size_t scheme = a->forward.find("://");
        if (scheme == std::string::npos) throw UsageError("--forward must be an http:// URL");
        const std::size_t slash = a->forward.find('/', scheme + 3);
        forward = std::make_unique<httplib::Client>(a->forward.substr(0, slash));
        if (slash != std::string::npos) forward_path = a->forward.substr(slash);
        forward->set_tcp_nodelay(true);
      }
      std::ofstream capture;
      if (!a->capture.empty()) {
        capture.open(a->capture, std::ios::app | std::ios::binary);
        if (!capture) throw UsageError("cannot open " + a->capture);
      }
      std::mutex out;
      // Appends the new event's line before its record commits, inside the handler: a line that
      // cannot be written (a full disk) fails the delivery (500, the sender retries) instead of
      // being lost behind a 200, and what was partly written is cut off again.
      const auto append_capture = [&](const receiver::Headers& headers, const std::string& body) {
        nlohmann::json h;
        for (std::string_view name : {kHeaderId, kHeaderTimestamp, kHeaderSignature,
                                      kHeaderDeliveryId, kHeaderEventType}) {
          if (auto v = headers.get(name)) h[std::string(name)] = std::string(*v);
        }
        const std::string line = capture_line(h, body) + "\n";
        std::lock_guard lock(out);
        capture.clear();
        std::error_code size_error;
        const std::uintmax_t before = std::filesystem::file_size(a->capture, size_error);
        capture << line;
        capture.flush();
        if (capture) return;
        capture.clear();
        std::error_code ignored;  // opened for appending: the next line goes to the (new) end
        if (!size_error) std::filesystem::resize_file(a->capture, before, ignored);
        std::cerr << "webhooks listen: cannot append to " << a->capture
                  << " (disk full?); the delivery is answered 500 and will be retried" << std::endl;
        throw std::runtime_error("cannot append to the capture file");
      };

      http::Server server;
      receiver::limit_request_bodies(server, rx.config().max_body_bytes, nullptr,
                                     http::Bodies::json);
      server.Post(".*", [&](const httplib::Request& req, httplib::Response& res) {
        const receiver::Headers headers = receiver::headers_of(req);
        bool is_new = false;
        const receiver::Answer answer =
            rx.handle(headers, req.body, [&](const receiver::Event&) -> receiver::Reply {
              is_new = true;
              receiver::Reply reply;
              if (forward) {
                httplib::Headers copy;
                for (const auto& [name, value] : req.headers) {
                  if (name.rfind("webhook-", 0) == 0 || name.rfind("Webhook-", 0) == 0) copy.emplace(name, value);
                }
                const auto r = forward->Post(forward_path, copy, req.body, "application/json");
                if (!r) return {502, "{\"error\":{\"code\":\"forward_failed\",\"message\":\"no answer\"}}"};
                reply = {r->status, r->body};
              }
              if (capture.is_open() && reply.status < 300) append_capture(headers, req.body);
              return reply;
            });
        const std::string code = error_code_of(answer);
        const bool handled_now = is_new && answer.status < 300;  // the event's first success
        const std::string outcome = handled_now ? "new"
                                    : is_new    ? "failed (" + std::to_string(answer.status) + ")"
                                    : answer.status < 300 ? "duplicate"
                                    : "rejected: " + std::to_string(answer.status) + " " + code;
        {
          std::lock_guard lock(out);
          std::cout << headers.get(kHeaderId).value_or("-") << "  "
                    << headers.get(kHeaderEventType).value_or("-") << "  "
                    << headers.get(kHeaderDeliveryId).value_or("-") << "  " << outcome << std::endl;
        }
        receiver::write_answer(answer, res);
      });
      const int port = app::bind_and_announce(server, app::parse_listen(a->listen));
      const app::StopOnSignal stop(server, port);
      server.listen_after_bind();
      return kOk;
    };
  });
}

}  // namespace webhooks::cli
