// The demo's load: orders and payouts through the Driver (driver.h) while the servers are
// supervised, then waiting for the publisher to deliver every event, then operator replays.
#include <iomanip>
#include <sstream>
#include <thread>

#include "clients.h"
#include "demo_run.h"
#include "report/progress.h"

namespace webhooks::demo {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr auto kPoll = milliseconds(100);

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

// The order and payout events the merchant receiver has handled (0 while it is down).
int Demo::count_handled() const {
  int handled = 0;
  if (!receiver_->running()) return handled;
  auto merchant = client_for(receiver_port_);
  if (auto res = merchant->Get("/handled"); res && res->status == 200) {
    const json doc = json::parse(res->body, nullptr, false);
    if (doc.is_object()) {
      for (const json& e : doc["events"]) {
        if (ours(e.value("type", "")) && e.value("effects", 0) >= 1) ++handled;
      }
    }
  }
  return handled;
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
    const int handled = count_handled();
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

}  // namespace webhooks::demo
