// The demo's four servers: started from build/bin with the flags that inject its faults, the
// merchant receiver restarted after its planned SIGKILL, and all stopped in order at the end.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <utility>

#include "clients.h"
#include "demo_run.h"

namespace webhooks::demo {

using nlohmann::json;

// Starts build/bin/NAME with stdout and stderr appended to <work>/NAME.out and NAME.log, and waits
// for its `listening on HOST:PORT` line.
Demo::Server Demo::launch(const std::string& name, std::vector<std::string> args) {
  launcher::Options options;
  options.label = name;
  options.out_path = work_ / (name + ".out");
  options.err_path = work_ / (name + ".log");
  options.append = true;  // a restart continues the files
  auto child = std::make_unique<launcher::ChildProcess>(bin(name), std::move(args), work_,
                                                        std::move(options));
  child->wait_listening(deadline_);
  return child;
}

// Flags in pairs; the publisher gets a fast retry schedule and short leases, and at most 32
// concurrent deliveries (2 workers x 16): fewer than the receiver's 64 server threads, so no
// delivery waits for a thread held by an idle keep-alive connection.
std::vector<std::string> Demo::publisher_args() const {
  std::vector<std::string> args{"--listen", std::string(kHost) + ":0", "--db",
                                (work_ / "publisher.db").string()};
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--admin-token", admin_token_},
                                                        {"--retry-schedule", o_.retry_schedule},
                                                        {"--max-age", "1h"},
                                                        {"--lease", "5s"},
                                                        {"--ttl", "1h"},
                                                        {"--poll-interval", "50ms"},
                                                        {"--connect-timeout", "2s"},
                                                        {"--timeout", "10s"},
                                                        {"--workers", "2"},
                                                        {"--max-in-flight", "16"},
                                                        {"--batch-size", "32"}}) {
    args.push_back(flag);
    args.push_back(value);
  }
  args.push_back("--allow-private-networks");
  return args;
}

std::vector<std::string> Demo::receiver_args(int crash_on) const {
  std::vector<std::string> args{"--listen",
                                std::string(kHost) + ":0",
                                "--db",
                                (work_ / "merchant.db").string(),
                                "--secret",
                                secret_,
                                "--consumer",
                                "demo-merchant",
                                "--lease",
                                "2s",
                                "--fail-first-attempts",
                                std::to_string(o_.merchant_fail_percent)};
  if (crash_on > 0) {
    args.push_back("--crash-on-event");
    args.push_back(std::to_string(crash_on));
  }
  return args;
}

std::vector<std::string> Demo::orders_args() const {
  const std::string http = "http://" + std::string(kHost) + ":";
  return {"--listen", std::string(kHost) + ":0", "--db", (work_ / "orders.db").string(),
          "--api-key", api_key_ + ":" + kMerchant, "--partner-url",
          http + std::to_string(partner_port_), "--publisher-url",
          http + std::to_string(publisher_port_), "--publisher-token", admin_token_, "--lease",
          "2s", "--ttl", "1h", "--partner-timeout", "2s",
          // Each operation takes 5 ms inside its lease, so a resend sent together with its
          // original finds it in progress: 409. An order's delay is inside its group's
          // transaction, so the orders take 5 ms each one after another (25 ms made 26 s).
          "--operation-delay", "5ms"};
}

namespace {

// Restarts come back on the same port and database, without the crash, so the publisher's
// retries land on the new process.
std::vector<std::string> restart_args(const std::vector<std::string>& args, int port) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--crash-on-event") {
      ++i;
      continue;
    }
    out.push_back(args[i]);
    if (args[i] == "--listen") {
      out.push_back(std::string(kHost) + ":" + std::to_string(port));
      ++i;
    }
  }
  return out;
}

}  // namespace

void Demo::start_servers() {
  publisher_ = launch("webhooks-publisherd", publisher_args());
  publisher_port_ = publisher_->port();
  partner_ = launch("payout-partner",
                    {"--listen", std::string(kHost) + ":0", "--db", (work_ / "partner.db").string(),
                     "--drop-after-commit", std::to_string(o_.partner_drops)});
  partner_port_ = partner_->port();
  const int events = o_.orders + o_.payouts;
  const int crash_on = o_.crash_on_event >= 0 ? o_.crash_on_event : std::max(1, events / 3);
  const std::vector<std::string> args = receiver_args(crash_on);
  receiver_ = launch("merchant-receiver", args);
  receiver_port_ = receiver_->port();
  receiver_->set_args(restart_args(args, receiver_port_));
  register_endpoint();
  orders_ = launch("orders-api", orders_args());
  orders_port_ = orders_->port();
  print_servers(crash_on);
}

void Demo::print_servers(int crash_on) const {
  std::cout << "  webhooks-publisherd  http://" << kHost << ":" << publisher_port_
            << "  SQLite, retry schedule " << o_.retry_schedule << "\n"
            << "  payout-partner       http://" << kHost << ":" << partner_port_
            << "  drops its answer to the first " << o_.partner_drops << " transfers it commits\n"
            << "  merchant-receiver    http://" << kHost << ":" << receiver_port_ << "  fails "
            << o_.merchant_fail_percent << "% of first attempts"
            << (crash_on > 0
                    ? ", SIGKILLs itself in the handler of event " + std::to_string(crash_on)
                    : std::string())
            << "\n"
            << "  orders-api           http://" << kHost << ":" << orders_port_
            << "  outbox relay to the publisher, payouts through the partner\n"
            << "  endpoint " << endpoint_id_ << " registered for " << kMerchant
            << " (order.*, payout.*)\n"
            << std::endl;
}

void Demo::register_endpoint() {
  auto client = client_for(publisher_port_, admin_token_);
  const json body{
      {"merchant_id", kMerchant},
      {"url", "http://" + std::string(kHost) + ":" + std::to_string(receiver_port_) + "/webhooks"},
      {"event_types", {"order.*", "payout.*"}},
      {"secret", secret_}};
  auto res = client->Post("/v1/endpoints", body.dump(), "application/json");
  if (!res) throw Failure("POST /v1/endpoints: " + httplib::to_string(res.error()));
  if (res->status != 201) {
    throw Failure("the publisher refused the merchant's endpoint (" + std::to_string(res->status) +
                  "): " + res->body);
  }
  endpoint_id_ = json::parse(res->body, nullptr, false).value("id", "");
}

// Restarts the merchant receiver after its (planned) SIGKILL; any other exit ends the demo.
void Demo::supervise() {
  for (launcher::ChildProcess* c :
       {publisher_.get(), partner_.get(), receiver_.get(), orders_.get()}) {
    if (c == nullptr || c->running()) continue;
    const int status = c->exit_status().value_or(0);
    if (c == receiver_.get() && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
      ++f_.receiver_crashes;
      std::cout << (::isatty(STDOUT_FILENO) ? "\r\x1b[K" : "")
                << "  merchant-receiver was SIGKILLed inside a handler; restarting it on port "
                << receiver_port_ << std::endl;
      receiver_->restart();
      receiver_->wait_listening(deadline_);
      ++f_.receiver_restarts;
      continue;
    }
    throw Failure(c->label() + " exited unexpectedly (" + c->describe_exit() + "). The end of " +
                  c->err_path().string() + ":\n" + c->err_tail());
  }
}

// SIGTERM to every server: the orders API first (its relay stops), then the publisher (its
// keep-alive connections to the receiver close, so the receiver need not wait them out).
void Demo::stop_servers(std::vector<std::string>& failures) {
  const auto t0 = Clock::now();
  for (auto* c : {&orders_, &publisher_, &receiver_, &partner_}) {
    if (!*c) continue;
    const bool was_running = (*c)->running();
    const int status = (*c)->stop(std::chrono::seconds(10));
    if (was_running && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      failures.push_back((*c)->label() + " did not stop cleanly on SIGTERM (" +
                         launcher::describe_wait_status(status) + "); see " +
                         (*c)->err_path().string());
    }
    c->reset();
  }
  f_.stop_seconds = seconds_since(t0);
}

}  // namespace webhooks::demo
