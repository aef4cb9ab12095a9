// build/bin/merchant-receiver: a merchant's webhook endpoint. POST /webhooks verifies, dedups and
// handles order.* and payout.* events in transactional mode; GET /handled shows what was handled.
// Flags: DESIGN.md, "Interfaces that scripts rely on"; docs/receiver.md.
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>
#include <thread>

#include "merchant.h"
#include "webhooks/error.h"
#include "webhooks/examples/flags.h"
#include "webhooks/log.h"
#include "webhooks/receiver/http_server.h"

namespace {

struct Flags {
  std::string listen = "127.0.0.1:8783";
  std::string db = "./merchant.db";
  std::vector<std::string> secrets;
  std::string consumer = "merchant";
  double lease_s = 30, ttl_s = 7 * 24 * 3600, tolerance_s = 300;
  merchant::Faults faults;
};

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

std::pair<std::string, int> split_listen(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    throw webhooks::Error(webhooks::ErrorCode::invalid_argument,
                          "--listen " + text + ": expected HOST:PORT");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const int port = std::stoi(text.substr(colon + 1));
  if (port < 0 || port > 65535) {
    throw webhooks::Error(webhooks::ErrorCode::invalid_argument, "--listen: bad port");
  }
  return {host, port};
}

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

int run(const Flags& flags) {
  webhooks::receiver::Config config;
  config.secrets = flags.secrets;
  config.consumer = flags.consumer;
  config.store = flags.db;
  config.lease = millis(flags.lease_s);
  config.ttl = millis(flags.ttl_s);
  config.tolerance = std::chrono::seconds(std::llround(flags.tolerance_s));
  if (config.lease < std::chrono::seconds(3)) {
    config.maintenance_interval = std::max(config.lease, std::chrono::milliseconds(100));
  }
  webhooks::receiver::Receiver receiver(config);
  merchant::create_tables(receiver.database());
  merchant::Merchant shop(receiver.database(), flags.faults);

  httplib::Server server;
  webhooks::receiver::limit_request_bodies(server, config.max_body_bytes);
  server.Post("/webhooks", [&](const httplib::Request& req, httplib::Response& res) {
    const auto answer = receiver.handle(
        webhooks::receiver::headers_of(req), req.body,
        [&](const webhooks::receiver::Event& e, webhooks::db::Transaction& tx) {
          return shop.handle(e, tx);
        },
        [&](const webhooks::receiver::Event& e) { shop.count_call(e); });
    webhooks::receiver::write_answer(answer, res);
  });
  server.Get("/handled", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(shop.handled_json(), "application/json");
  });
  const auto [host, port] = split_listen(flags.listen);
  const int bound = webhooks::receiver::bind_server(server, host, port);
  const bool v6 = host.find(':') != std::string::npos;
  std::cout << "listening on " << (v6 ? "[" + host + "]" : host) << ":" << bound << std::endl;

  std::thread stopper([&server] {
    const sigset_t set = stop_signals();
    int signal_number = 0;
    sigwait(&set, &signal_number);
    server.stop();
  });
  server.listen_after_bind();
  pthread_kill(stopper.native_handle(), SIGTERM);  // wakes it when the server stopped otherwise
  stopper.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // threads started later inherit the mask

  Flags flags;
  CLI::App app{"merchant-receiver: an example merchant's idempotent webhook endpoint"};
  app.add_option("--listen", flags.listen, "HOST:PORT (port 0 picks a free port)")
      ->capture_default_str();
  app.add_option("--db", flags.db, "SQLite path or postgres:// URL")->capture_default_str();
  app.add_option("--secret", flags.secrets, "signing secret whsec_... (repeatable: rotation)")
      ->required();
  app.add_option("--consumer", flags.consumer, "dedup scope")->capture_default_str();
  app.add_option("--lease", flags.lease_s, "handler lease, seconds")
      ->check(webhooks::examples::positive_number())
      ->capture_default_str();
  app.add_option("--ttl", flags.ttl_s, "dedup record lifetime, seconds")
      ->check(webhooks::examples::positive_number())
      ->capture_default_str();
  app.add_option("--tolerance", flags.tolerance_s, "timestamp tolerance, seconds")
      ->check(webhooks::examples::positive_number())
      ->capture_default_str();
  app.add_option("--fail-first-attempts", flags.faults.fail_first_attempts_percent,
                 "fail the first call of this percentage of events (by hash of the event id)")
      ->check(CLI::Range(0, 100));
  app.add_option("--crash-on-event", flags.faults.crash_on_event,
                 "SIGKILL this process inside the handler of the Nth new event")
      ->check(webhooks::examples::non_negative_number());
  if (const auto exit_code = webhooks::examples::parse_command_line(app, argc, argv)) {
    return *exit_code;
  }
  webhooks::configure_json_logging("info");
  try {
    return run(flags);
  } catch (const std::exception& e) {
    std::cerr << "merchant-receiver: " << e.what() << std::endl;
    return 1;
  }
}
