#include "demo.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "driver.h"
#include "failure.h"
#include "webhooks/base64.h"
#include "webhooks/launcher/child_process.h"
#include "webhooks/random.h"

namespace webhooks::demo {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;

constexpr const char* kHost = "127.0.0.1";
constexpr const char* kMerchant = "merchant_demo";
constexpr auto kPoll = milliseconds(100);

std::string random_hex(std::size_t bytes) {
  std::vector<std::uint8_t> buf(bytes);
  secure_random_bytes(buf);
  std::string out;
  char two[3];
  for (std::uint8_t b : buf) {
    std::snprintf(two, sizeof two, "%02x", b);
    out += two;
  }
  return out;
}

std::string new_secret() {
  std::array<std::uint8_t, 32> key{};
  secure_random_bytes(key);
  return "whsec_" + base64_encode(key);
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A progress bar on a terminal; a line at every quarter otherwise (logs, CI, the test).
class Progress {
 public:
  Progress(std::string label, bool enabled)
      : label_(std::move(label)), enabled_(enabled), tty_(::isatty(STDOUT_FILENO) == 1) {}

  void update(int done, int total, const std::string& note = "") {
    if (!enabled_ || total <= 0) return;
    done = std::clamp(done, 0, total);
    if (tty_) {
      constexpr int kWidth = 32;
      const int filled = done * kWidth / total;
      std::cout << "\r  " << std::left << std::setw(26) << label_ << " ["
                << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] "
                << std::right << std::setw(5) << done << "/" << total << "  " << note << "\x1b[K"
                << std::flush;
    } else {
      const int quarter = done * 4 / total;
      if (quarter > last_quarter_) {
        last_quarter_ = quarter;
        std::cout << "  " << label_ << ": " << done << "/" << total
                  << (note.empty() ? "" : "  " + note) << std::endl;
      }
    }
  }
  void finish(const std::string& note) {
    if (!enabled_) return;
    if (tty_) {
      std::cout << "\r  " << std::left << std::setw(26) << label_ << " " << note << "\x1b[K"
                << std::endl;
    } else {
      std::cout << "  " << label_ << ": " << note << std::endl;
    }
  }

 private:
  std::string label_;
  bool enabled_, tty_;
  int last_quarter_ = -1;
};

std::unique_ptr<httplib::Client> client_for(int port, const std::string& token = "") {
  auto c = std::make_unique<httplib::Client>(kHost, port);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  c->set_connection_timeout(std::chrono::seconds(5));
  c->set_read_timeout(std::chrono::seconds(20));
  if (!token.empty()) c->set_bearer_token_auth(token);
  return c;
}

json get_json(httplib::Client& client, const std::string& what, const std::string& path) {
  auto res = client.Get(path);
  if (!res) throw Failure(what + " GET " + path + ": " + httplib::to_string(res.error()));
  if (res->status != 200) {
    throw Failure(what + " GET " + path + " answered " + std::to_string(res->status) + ": " +
                  res->body);
  }
  json doc = json::parse(res->body, nullptr, false);
  if (doc.is_discarded()) throw Failure(what + " GET " + path + " answered invalid JSON");
  return doc;
}

// Prometheus text: "name{labels} value" lines; `# ...` lines skipped.
std::map<std::string, double> parse_metrics(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    try {
      out[line.substr(0, space)] = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
    }
  }
  return out;
}

long metric(const std::map<std::string, double>& m, const std::string& name) {
  const auto it = m.find(name);
  return it == m.end() ? 0 : static_cast<long>(it->second);
}

// The publisher's GET /metrics, parsed; throws Failure when it does not answer 200.
std::map<std::string, double> publisher_metrics(httplib::Client& publisher) {
  const auto res = publisher.Get("/metrics");
  if (!res || res->status != 200) throw Failure("GET /metrics of the publisher failed");
  return parse_metrics(res->body);
}

constexpr const char* kSucceededAttempts = "webhooks_attempts_total{outcome=\"succeeded\"}";

bool ours(const std::string& type) {
  return type.starts_with("order.") || type.starts_with("payout.");
}

// What the publisher recorded about one event the merchant saw.
struct EventRecord {
  std::string event_id, type, subject_id;  // subject_id: data.id (the order or payout)
  int calls = 0, effects = 0;              // at the merchant
  int attempts = 0, retries = 0, ok_answers = 0, in_progress_answers = 0, failed_answers = 0,
      no_answers = 0, manual = 0;
  std::vector<std::string> task_states;
};

struct Figures {
  int orders_requested = 0, payouts_requested = 0;
  DriverStats client;
  int orders_created = 0, payouts_created = 0;
  long events_accepted = 0;
  int attempts = 0, retries = 0, failed_answers = 0, no_answers = 0, in_progress_answers = 0;
  int events_handled = 0, events_one_effect = 0, handler_calls = 0;
  int duplicates_after_success = 0, duplicates_suppressed = 0, operator_replays = 0;
  int receiver_crashes = 0, receiver_restarts = 0;
  int partner_drops = 0, transfers = 0, payouts_one_transfer = 0;
  int reconcile_exit = -1;
  std::string reconcile_result, reconcile_detail;
  double load_seconds = 0, delivery_seconds = 0, stop_seconds = 0, total_seconds = 0;
};

class Demo {
 public:
  Demo(const Options& options, const std::atomic<bool>& stop)
      : o_(options),
        stop_(stop),
        started_(Clock::now()),
        deadline_(started_ + milliseconds(static_cast<long>(options.timeout_s * 1000))) {}

  int run();

 private:
  void check() const {
    if (stop_) throw Interrupted();
    if (Clock::now() > deadline_) {
      throw Failure("the demo did not finish within --timeout " +
                    std::to_string(static_cast<int>(o_.timeout_s)) + " s");
    }
  }
  void prepare_work_dir();
  fs::path bin(const std::string& name) const;
  std::unique_ptr<launcher::ChildProcess> launch(const std::string& name,
                                                 std::vector<std::string> args);
  void start_servers();
  void register_endpoint();
  void supervise();
  void drive_load();
  void wait_for_deliveries(const std::string& label, long succeeded_before = 0, int replays = 0);
  void operator_replay();
  void collect();
  std::vector<std::string> verify();
  void print_table(const std::vector<std::string>& failures) const;
  void write_summary(const std::vector<std::string>& failures) const;
  void stop_servers(std::vector<std::string>& failures);

  Options o_;
  const std::atomic<bool>& stop_;
  Clock::time_point started_, deadline_;
  fs::path work_;
  bool own_work_dir_ = false;
  std::string admin_token_, api_key_, secret_, endpoint_id_;
  std::unique_ptr<launcher::ChildProcess> publisher_, partner_, receiver_, orders_;
  int publisher_port_ = 0, partner_port_ = 0, receiver_port_ = 0, orders_port_ = 0;
  std::unique_ptr<Driver> driver_;
  std::map<std::string, EventRecord> events_;  // by event_id
  json handled_, transfers_;
  Figures f_;
};

void Demo::prepare_work_dir() {
  if (o_.work_dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "webhooks-demo-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw Failure("cannot create a work directory under " + fs::temp_directory_path().string());
    }
    work_ = pattern;
    own_work_dir_ = true;
    return;
  }
  work_ = fs::absolute(o_.work_dir);
  fs::create_directories(work_);
  for (const char* db : {"publisher.db", "orders.db", "partner.db", "merchant.db"}) {
    if (fs::exists(work_ / db)) {
      throw Failure("--work-dir " + work_.string() + " already holds " + db +
                    " from an earlier run; give an empty or new directory");
    }
  }
}

fs::path Demo::bin(const std::string& name) const {
  const fs::path path = o_.bin_dir / name;
  if (::access(path.c_str(), X_OK) != 0) {
    throw Failure(path.string() + " is missing or not executable: run `make build` first, or " +
                  "point --bin-dir at the build's bin/ directory");
  }
  return path;
}

// Starts build/bin/NAME with stdout and stderr appended to <work>/NAME.out and NAME.log, and waits
// for its `listening on HOST:PORT` line.
std::unique_ptr<launcher::ChildProcess> Demo::launch(const std::string& name,
                                                     std::vector<std::string> args) {
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

void Demo::start_servers() {
  const std::string any = std::string(kHost) + ":0";
  const std::string w = work_.string() + "/";
  // Flags in pairs; the publisher gets a fast retry schedule and short leases, and at most 32
  // concurrent deliveries (2 workers x 16): fewer than the receiver's 64 server threads, so no
  // delivery waits for a thread held by an idle keep-alive connection.
  std::vector<std::string> publisher_args{"--listen", any, "--db", w + "publisher.db"};
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--admin-token", admin_token_},
                                                        {"--retry-schedule", o_.retry_schedule},
                                                        {"--max-age", "1h"},
                                                        {"--lease", "5"},
                                                        {"--ttl", "3600"},
                                                        {"--poll-interval", "50ms"},
                                                        {"--connect-timeout", "2s"},
                                                        {"--timeout", "10s"},
                                                        {"--workers", "2"},
                                                        {"--max-in-flight", "16"},
                                                        {"--batch-size", "32"}}) {
    publisher_args.push_back(flag);
    publisher_args.push_back(value);
  }
  publisher_args.push_back("--allow-private-networks");
  publisher_ = launch("webhooks-publisherd", publisher_args);
  publisher_port_ = publisher_->port();

  partner_ = launch("payout-partner", {"--listen", any, "--db", w + "partner.db",
                                       "--drop-after-commit", std::to_string(o_.partner_drops)});
  partner_port_ = partner_->port();

  std::vector<std::string> receiver_args{"--listen", any,     "--db",       w + "merchant.db",
                                         "--secret", secret_, "--consumer", "demo-merchant",
                                         "--lease",  "2"};
  receiver_args.push_back("--fail-first-attempts");
  receiver_args.push_back(std::to_string(o_.merchant_fail_percent));
  const int events = o_.orders + o_.payouts;
  const int crash_on = o_.crash_on_event >= 0 ? o_.crash_on_event : std::max(1, events / 3);
  if (crash_on > 0) {
    receiver_args.push_back("--crash-on-event");
    receiver_args.push_back(std::to_string(crash_on));
  }
  receiver_ = launch("merchant-receiver", receiver_args);
  receiver_port_ = receiver_->port();
  // Restarts come back on the same port and database, without the crash, so the publisher's
  // retries land on the new process.
  std::vector<std::string> restart_args;
  for (std::size_t i = 0; i < receiver_args.size(); ++i) {
    if (receiver_args[i] == "--crash-on-event") {
      ++i;
      continue;
    }
    restart_args.push_back(receiver_args[i]);
    if (receiver_args[i] == "--listen") {
      restart_args.push_back(std::string(kHost) + ":" + std::to_string(receiver_port_));
      ++i;
    }
  }
  receiver_->set_args(restart_args);

  register_endpoint();

  orders_ = launch(
      "orders-api",
      {"--listen", any, "--db", w + "orders.db", "--api-key", api_key_ + ":" + kMerchant,
       "--partner-url", "http://" + std::string(kHost) + ":" + std::to_string(partner_port_),
       "--publisher-url", "http://" + std::string(kHost) + ":" + std::to_string(publisher_port_),
       "--publisher-token", admin_token_, "--lease", "2", "--ttl", "3600", "--partner-timeout-ms",
       "2000",
       // Each operation takes 5 ms inside its lease, so a resend sent together with its
       // original finds it in progress: 409. An order's delay is inside its group's
       // transaction, so the orders take 5 ms each one after another (25 ms made 26 s).
       "--operation-delay-ms", "5"});
  orders_port_ = orders_->port();

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

void Demo::drive_load() {
  DriverOptions d;
  d.host = kHost;
  d.port = orders_port_;
  d.api_key = api_key_;
  d.orders = o_.orders;
  d.payouts = o_.payouts;
  d.resend_percent = o_.resend_percent;
  d.concurrency = o_.concurrency;
  d.deadline = deadline_;
  d.stop = &stop_;
  driver_ = std::make_unique<Driver>(d);
  Progress bar("orders and payouts", o_.progress);
  const auto t0 = Clock::now();
  driver_->start();
  while (!driver_->finished()) {
    try {
      supervise();
      check();
    } catch (...) {
      try {
        driver_->join();  // the driver sees the same stop or deadline, or its server gone
      } catch (...) {
      }
      throw;
    }
    bar.update(driver_->done_units(), driver_->total_units());
    std::this_thread::sleep_for(milliseconds(50));
  }
  driver_->join();
  f_.load_seconds = seconds_since(t0);
  const DriverStats s = driver_->stats();
  std::ostringstream note;
  note << s.sends << " requests in " << std::fixed << std::setprecision(1) << f_.load_seconds
       << " s";
  bar.finish(note.str());
}

// Polls until the publisher has nothing left to deliver and the merchant has handled every event,
// and, after `replays` operator replays, until that many more attempts than `succeeded_before`
// have succeeded. The bar counts events handled, or with replays the replays delivered.
void Demo::wait_for_deliveries(const std::string& label, long succeeded_before, int replays) {
  const int expected = o_.orders + o_.payouts;
  auto pub = client_for(publisher_port_);
  Progress bar(label, o_.progress);
  const auto t0 = Clock::now();
  while (true) {
    supervise();
    check();
    const auto m = publisher_metrics(*pub);
    const long pending = metric(m, "webhooks_tasks{state=\"pending\"}");
    const long delivering = metric(m, "webhooks_tasks{state=\"delivering\"}");
    const long dead = metric(m, "webhooks_tasks{state=\"dead\"}");
    const long succeeded = metric(m, kSucceededAttempts);
    if (dead > 0) {
      throw Failure(std::to_string(dead) + " deliveries gave up (dead); see " +
                    publisher_->err_path().string());
    }
    int handled = 0;
    if (receiver_->running()) {
      auto merchant = client_for(receiver_port_);
      if (auto res = merchant->Get("/handled"); res && res->status == 200) {
        const json doc = json::parse(res->body, nullptr, false);
        if (doc.is_object()) {
          for (const json& e : doc["events"]) {
            if (ours(e.value("type", "")) && e.value("effects", 0) >= 1) ++handled;
          }
        }
      }
    }
    // Every event was handled before the replays, so counting events would show the bar full
    // (1100/1100 by default) from the start; a replay is delivered when its attempt succeeds.
    const long replayed = std::min<long>(succeeded - succeeded_before, replays);
    if (replays > 0) {
      bar.update(static_cast<int>(replayed), replays,
                 "queued at the publisher: " + std::to_string(pending + delivering));
    } else {
      bar.update(handled, expected,
                 "queued at the publisher: " + std::to_string(pending + delivering));
    }
    if (handled >= expected && pending == 0 && delivering == 0 && replayed >= replays) break;
    std::this_thread::sleep_for(kPoll);
  }
  const double took = seconds_since(t0);
  f_.delivery_seconds += took;
  std::ostringstream note;
  note << "done in " << std::fixed << std::setprecision(1) << took << " s";
  bar.finish(note.str());
}

// An operator replays a few events through the admin API (as after an incident): the receiver
// answers each from its dedup record without running the handler again.
void Demo::operator_replay() {
  if (o_.operator_replays <= 0) return;
  auto merchant = client_for(receiver_port_);
  const json handled = get_json(*merchant, "merchant-receiver", "/handled");
  std::vector<std::string> ids;
  for (const json& e : handled["events"]) {
    if (ours(e.value("type", ""))) ids.push_back(e.value("event_id", ""));
  }
  if (ids.empty()) return;
  const int n = std::min<int>(o_.operator_replays, static_cast<int>(ids.size()));
  auto pub = client_for(publisher_port_, admin_token_);
  const long succeeded_before = metric(publisher_metrics(*pub), kSucceededAttempts);
  for (int i = 0; i < n; ++i) {
    const std::string& id = ids[static_cast<std::size_t>(i) * ids.size() / n];
    auto res = pub->Post("/v1/events/" + id + "/replay", "{}", "application/json");
    if (!res || res->status != 202) {
      throw Failure(
          "POST /v1/events/" + id + "/replay: " +
          (res ? std::to_string(res->status) + " " + res->body : httplib::to_string(res.error())));
    }
  }
  f_.operator_replays = n;
  wait_for_deliveries("operator replays", succeeded_before, n);
}

void Demo::collect() {
  {
    auto merchant = client_for(receiver_port_);
    handled_ = get_json(*merchant, "merchant-receiver", "/handled");
    auto partner = client_for(partner_port_);
    transfers_ = get_json(*partner, "payout-partner", "/transfers")["transfers"];
  }
  for (const json& e : handled_["events"]) {
    EventRecord r;
    r.event_id = e.value("event_id", "");
    r.type = e.value("type", "");
    r.calls = e.value("calls", 0);
    r.effects = e.value("effects", 0);
    events_[r.event_id] = r;
  }
  // The publisher's record of each event: its data (which order or payout) and its attempts.
  std::vector<EventRecord*> list;
  for (auto& [id, r] : events_) list.push_back(&r);
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr error;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      try {
        auto pub = client_for(publisher_port_, admin_token_);
        for (std::size_t i = next++; i < list.size(); i = next++) {
          if (stop_) return;
          EventRecord& r = *list[i];
          const json event = get_json(*pub, "webhooks-publisherd", "/v1/events/" + r.event_id);
          if (event.contains("data") && event["data"].is_object()) {
            r.subject_id = event["data"].value("id", "");
          }
          for (const json& task : event["tasks"]) r.task_states.push_back(task.value("state", ""));
          const json attempts =
              get_json(*pub, "webhooks-publisherd", "/v1/events/" + r.event_id + "/attempts");
          for (const json& a : attempts["attempts"]) {
            const int status = a.value("status", 0);
            const bool manual = a.value("trigger", "") == "manual";
            ++r.attempts;
            if (manual) ++r.manual;
            if (!manual && a.value("attempt_number", 1) > 1) ++r.retries;
            if (status >= 200 && status < 300) {
              ++r.ok_answers;
            } else if (status == 409) {
              ++r.in_progress_answers;
            } else if (status == 0) {
              ++r.no_answers;
            } else {
              ++r.failed_answers;
            }
          }
        }
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  check();

  auto pub = client_for(publisher_port_);
  const auto m = publisher_metrics(*pub);
  f_.events_accepted = metric(m, "webhooks_events_accepted_total");

  // Figures.
  f_.orders_requested = o_.orders;
  f_.payouts_requested = o_.payouts;
  f_.client = driver_->stats();
  for (const Request& r : driver_->requests()) {
    if (r.created == 1 && r.ids.size() == 1) {
      ++(r.kind == Kind::order ? f_.orders_created : f_.payouts_created);
    }
  }
  for (const auto& [id, r] : events_) {
    if (!ours(r.type)) continue;
    ++f_.events_handled;
    if (r.effects == 1) ++f_.events_one_effect;
    f_.handler_calls += r.calls;
    f_.attempts += r.attempts;
    f_.retries += r.retries;
    f_.failed_answers += r.failed_answers;
    f_.no_answers += r.no_answers;
    f_.in_progress_answers += r.in_progress_answers;
    f_.duplicates_after_success += std::max(0, r.ok_answers - 1);
  }
  f_.duplicates_suppressed = f_.duplicates_after_success + f_.in_progress_answers;
  f_.partner_drops = o_.partner_drops;
  f_.transfers = static_cast<int>(transfers_.size());
  std::map<std::string, int> transfers_by_key;
  for (const json& t : transfers_) ++transfers_by_key[t.value("idempotency_key", "")];
  for (const Request& r : driver_->requests()) {
    if (r.kind == Kind::payout && !r.downstream_key.empty() &&
        transfers_by_key[r.downstream_key] == 1) {
      ++f_.payouts_one_transfer;
    }
  }

  launcher::Options reconcile;
  reconcile.label = "orders-api reconcile";
  reconcile.out_path = work_ / "reconcile.out";
  reconcile.err_path = work_ / "reconcile.log";
  const auto left = std::chrono::duration_cast<milliseconds>(deadline_ - Clock::now());
  const launcher::Finished rec =
      launcher::run_to_end(bin("orders-api"),
                           {"reconcile", "--db", (work_ / "orders.db").string(), "--partner-url",
                            "http://" + std::string(kHost) + ":" + std::to_string(partner_port_)},
                           work_, reconcile, std::max(left, milliseconds(0)));
  f_.reconcile_exit = rec.exit_code;
  std::istringstream lines(rec.out);
  int matched = 0, pending = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("result: ")) f_.reconcile_result = line.substr(8);
    if (line.starts_with("matched: ")) matched = std::atoi(line.c_str() + 9);
    if (line.starts_with("pending: ")) pending = std::atoi(line.c_str() + 9);
  }
  if (f_.reconcile_result.empty())
    f_.reconcile_result = "exit code " + std::to_string(rec.exit_code);
  f_.reconcile_detail =
      std::to_string(matched) + " matched, " + std::to_string(pending) + " pending";
}

// The invariants; each failure is one line that says what differs.
std::vector<std::string> Demo::verify() {
  std::vector<std::string> failures;
  auto fail = [&](const std::string& what) {
    if (failures.size() < 20) failures.push_back(what);
  };
  std::map<std::string, std::vector<const EventRecord*>> events_of_subject;
  for (const auto& [id, r] : events_) {
    if (ours(r.type)) events_of_subject[r.subject_id].push_back(&r);
  }
  for (const Request& r : driver_->requests()) {
    const std::string what = (r.kind == Kind::order ? "order " : "payout ") + r.key;
    if (r.created != 1) {
      fail(what + ": created " + std::to_string(r.created) + " times (want exactly once)");
    }
    if (r.ids.size() != 1) {
      fail(what + ": answers carried " + std::to_string(r.ids.size()) + " different ids");
      continue;
    }
    const std::string& id = *r.ids.begin();
    const std::string type = r.kind == Kind::order ? "order.created" : "payout.created";
    const auto it = events_of_subject.find(id);
    int count = 0;
    if (it != events_of_subject.end()) {
      for (const EventRecord* e : it->second) {
        if (e->type != type) continue;
        ++count;
        if (e->effects != 1) {
          fail(what + ": event " + e->event_id + " has " + std::to_string(e->effects) +
               " effects at the merchant (want 1)");
        }
      }
    }
    if (count == 0) fail(what + " (" + id + "): no " + type + " event reached the merchant");
    if (count > 1) fail(what + " (" + id + "): " + std::to_string(count) + " " + type + " events");
    if (r.kind == Kind::payout) {
      int transfers = 0;
      for (const json& t : transfers_) {
        if (t.value("idempotency_key", "") == r.downstream_key) ++transfers;
      }
      if (transfers != 1) {
        fail(what + ": the partner holds " + std::to_string(transfers) + " transfers for " +
             r.downstream_key + " (want 1)");
      }
    }
  }
  for (const auto& [id, r] : events_) {
    if (ours(r.type) && r.effects != 1) {
      fail("event " + id + " (" + r.type + "): effects = " + std::to_string(r.effects));
    }
    for (const std::string& state : r.task_states) {
      if (state != "succeeded") fail("event " + id + ": a delivery task is " + state);
    }
  }
  const long expected_events = o_.orders + o_.payouts;
  if (f_.events_accepted != expected_events) {
    fail("the publisher accepted " + std::to_string(f_.events_accepted) + " events (want " +
         std::to_string(expected_events) + ": one per order and payout)");
  }
  if (f_.events_handled != expected_events) {
    fail("the merchant saw " + std::to_string(f_.events_handled) + " order/payout events (want " +
         std::to_string(expected_events) + ")");
  }
  if (f_.transfers != o_.payouts) {
    fail("the partner holds " + std::to_string(f_.transfers) + " transfers for " +
         std::to_string(o_.payouts) + " payouts");
  }
  if (f_.reconcile_exit != 0 || f_.reconcile_result != "clean") {
    fail("orders-api reconcile: " + f_.reconcile_result + " (see " +
         (work_ / "reconcile.out").string() + ")");
  }
  return failures;
}

void Demo::print_table(const std::vector<std::string>& failures) const {
  const DriverStats& c = f_.client;
  auto row = [](const std::string& label, const std::string& value, const std::string& note = "") {
    std::cout << "  " << std::left << std::setw(40) << label << std::right << std::setw(9) << value
              << (note.empty() ? "" : "   " + note) << "\n";
  };
  auto n = [](long v) { return std::to_string(v); };
  std::cout << "\n  " << std::string(100, '-') << "\n";
  row("orders requested", n(f_.orders_requested));
  row("payouts requested", n(f_.payouts_requested));
  row("resends with the same Idempotency-Key", n(c.resends_concurrent + c.resends_after),
      n(c.resends_concurrent) + " together with the original, " + n(c.resends_after) + " after it");
  row("  absorbed as replays", n(c.replayed), "the stored answer, Idempotent-Replayed: true");
  row("  absorbed as 409 in progress", n(c.in_progress),
      "idempotency_key_in_use: the other request held the lease");
  if (c.client_retries > 0) {
    std::string why;
    for (const auto& [code, count] : c.server_error_codes) {
      why += (why.empty() ? "" : ", ") + n(count) + " x " + code;
    }
    if (c.no_answer > 0) why += (why.empty() ? "" : ", ") + n(c.no_answer) + " x no answer";
    row("  client retries (same key)", n(c.client_retries), why.empty() ? "" : "after " + why);
  }
  row("orders created", n(f_.orders_created),
      "one per key; every answer for a key had the same id");
  row("events accepted by the publisher", n(f_.events_accepted),
      "order.created + payout.created, from the outbox relay");
  row("delivery attempts", n(f_.attempts));
  row("  retries", n(f_.retries),
      n(f_.failed_answers) + " x 5xx from the handler, " + n(f_.no_answers) + " x no answer, " +
          n(f_.in_progress_answers) + " x 409 in progress");
  row("events handled by the merchant", n(f_.events_handled),
      n(f_.events_one_effect) + " with effects = 1");
  row("  handler calls", n(f_.handler_calls),
      n(f_.handler_calls - f_.events_one_effect) + " failed or crashed, then retried");
  row("duplicate deliveries suppressed", n(f_.duplicates_suppressed),
      n(f_.duplicates_after_success) + " after success (" + n(f_.operator_replays) +
          " operator replays), " + n(f_.in_progress_answers) + " x 409 while in progress");
  row("merchant receiver crashes / restarts",
      n(f_.receiver_crashes) + " / " + n(f_.receiver_restarts), "SIGKILL inside a handler");
  row("payouts created", n(f_.payouts_created), "one per key, each through the partner");
  row("partner transfers", n(f_.transfers),
      n(f_.payouts_one_transfer) + " payouts with exactly one; " + n(f_.partner_drops) +
          " answers dropped after commit");
  row("reconcile", f_.reconcile_result, f_.reconcile_detail);
  std::cout << "  " << std::string(100, '-') << "\n";
  std::ostringstream times;
  times << std::fixed << std::setprecision(1) << "load " << f_.load_seconds << " s, deliveries "
        << f_.delivery_seconds << " s, servers stopped in " << f_.stop_seconds << " s, total "
        << f_.total_seconds << " s";
  std::cout << "  " << times.str() << "\n\n";
  if (failures.empty()) {
    std::cout << "  OK: every order and payout event had exactly one effect at the merchant, and\n"
                 "  the partner holds exactly one transfer per payout.\n";
  } else {
    std::cout << "  FAILED:\n";
    for (const std::string& line : failures) std::cout << "  - " << line << "\n";
  }
  std::cout << std::flush;
}

void Demo::write_summary(const std::vector<std::string>& failures) const {
  if (o_.summary_path.empty()) return;
  const DriverStats& c = f_.client;
  const json summary{{"ok", failures.empty()},
                     {"failures", failures},
                     {"orders_requested", f_.orders_requested},
                     {"payouts_requested", f_.payouts_requested},
                     {"resends", c.resends_concurrent + c.resends_after},
                     {"resends_concurrent", c.resends_concurrent},
                     {"resends_after", c.resends_after},
                     {"answers_replayed", c.replayed},
                     {"answers_in_progress", c.in_progress},
                     {"client_retries", c.client_retries},
                     {"orders_created", f_.orders_created},
                     {"payouts_created", f_.payouts_created},
                     {"events_accepted", f_.events_accepted},
                     {"attempts", f_.attempts},
                     {"retries", f_.retries},
                     {"events_handled", f_.events_handled},
                     {"events_with_one_effect", f_.events_one_effect},
                     {"handler_calls", f_.handler_calls},
                     {"duplicates_suppressed", f_.duplicates_suppressed},
                     {"operator_replays", f_.operator_replays},
                     {"receiver_crashes", f_.receiver_crashes},
                     {"receiver_restarts", f_.receiver_restarts},
                     {"partner_transfers", f_.transfers},
                     {"payouts_with_one_transfer", f_.payouts_one_transfer},
                     {"reconcile_exit_code", f_.reconcile_exit},
                     {"reconcile_result", f_.reconcile_result},
                     {"seconds", f_.total_seconds}};
  std::ofstream out(o_.summary_path);
  out << summary.dump(2) << "\n";
  if (!out) std::cerr << "webhooks-demo: cannot write " << o_.summary_path << "\n";
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

int Demo::run() {
  try {
    for (const char* name :
         {"webhooks-publisherd", "orders-api", "payout-partner", "merchant-receiver"}) {
      bin(name);
    }
    prepare_work_dir();
  } catch (const Failure& e) {
    std::cerr << "webhooks-demo: " << e.what() << std::endl;
    return 1;
  }
  admin_token_ = random_hex(24);
  api_key_ = "sk_demo_" + random_hex(12);
  secret_ = new_secret();
  std::cout << "webhooks demo: " << o_.orders << " orders and " << o_.payouts << " payouts, "
            << o_.resend_percent << "% sent twice, on 127.0.0.1; logs and databases in "
            << work_.string() << "\n\n";
  std::vector<std::string> failures;
  int code = 1;
  try {
    start_servers();
    drive_load();
    wait_for_deliveries("deliveries");
    operator_replay();
    collect();
    failures = verify();
    stop_servers(failures);
    f_.total_seconds = seconds_since(started_);
    print_table(failures);
    write_summary(failures);
    code = failures.empty() ? 0 : 1;
  } catch (const Interrupted&) {
    std::cout << (::isatty(STDOUT_FILENO) ? "\n" : "")
              << "\nwebhooks-demo: interrupted; stopping the servers." << std::endl;
    stop_servers(failures);
    std::cout << "Logs and databases kept in " << work_.string() << std::endl;
    return 130;
  } catch (const std::exception& e) {
    std::cout << (::isatty(STDOUT_FILENO) ? "\n" : "") << std::flush;
    std::cerr << "\nwebhooks-demo: " << e.what() << std::endl;
    failures.insert(failures.begin(), e.what());
    stop_servers(failures);
    f_.total_seconds = seconds_since(started_);
    write_summary(failures);
    std::cerr << "Logs and databases kept in " << work_.string() << std::endl;
    return 1;
  }
  if (code == 0 && own_work_dir_ && !o_.keep_work_dir) {
    std::error_code ec;
    fs::remove_all(work_, ec);
  } else {
    std::cout << "  Logs and databases: " << work_.string() << "\n";
  }
  return code;
}

}  // namespace

int run_demo(const Options& options, const std::atomic<bool>& stop) {
  Demo demo(options, stop);
  return demo.run();
}

}  // namespace webhooks::demo
