// What the servers recorded once the load is delivered: the merchant's handled events, the
// partner's transfers, the publisher's record of each event and its attempts, and `orders-api
// reconcile`; counted into the figures.
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <sstream>
#include <thread>

#include "clients.h"
#include "demo_run.h"

namespace webhooks::demo {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr int kReaders = 4;  // threads reading the publisher's records

// One attempt of the publisher's GET /v1/events/{id}/attempts, counted into `r`.
void count_attempt(EventRecord& r, const json& a) {
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

// The publisher's record of one event: its data (which order or payout) and its attempts.
void read_publisher_record(httplib::Client& pub, EventRecord& r) {
  const json event = get_json(pub, "webhooks-publisherd", "/v1/events/" + r.event_id);
  if (event.contains("data") && event["data"].is_object()) {
    r.subject_id = event["data"].value("id", "");
  }
  for (const json& task : event["tasks"]) r.task_states.push_back(task.value("state", ""));
  const json attempts =
      get_json(pub, "webhooks-publisherd", "/v1/events/" + r.event_id + "/attempts");
  for (const json& a : attempts["attempts"]) count_attempt(r, a);
}

}  // namespace

void Demo::collect() {
  fetch_merchant_and_partner();
  fetch_publisher_records();
  check();
  auto pub = client_for(publisher_port_);
  const auto m = publisher_metrics(*pub);
  f_.events_accepted = metric(m, "webhooks_events_accepted_total");
  count_figures();
  reconcile();
}

void Demo::fetch_merchant_and_partner() {
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
}

// Every event's record from the publisher, read by kReaders threads; rethrows the first failure.
void Demo::fetch_publisher_records() {
  std::vector<EventRecord*> list;
  for (auto& [id, r] : events_) list.push_back(&r);
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr error;
  std::vector<std::thread> threads;
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&] {
      try {
        auto pub = client_for(publisher_port_, admin_token_);
        for (std::size_t i = next++; i < list.size(); i = next++) {
          if (stop_) return;
          read_publisher_record(*pub, *list[i]);
        }
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

void Demo::count_figures() {
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
}

// `orders-api reconcile` against the partner: its exit code and its `result:`, `matched:` and
// `pending:` lines.
void Demo::reconcile() {
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

}  // namespace webhooks::demo
