#include "driver.h"

#include <algorithm>
#include <cstdio>
#include <latch>
#include <nlohmann/json.hpp>

namespace webhooks::demo {
namespace {

using nlohmann::json;

constexpr auto kIoTimeout = std::chrono::seconds(10);
constexpr auto kMaxRetryWait = std::chrono::seconds(2);

const char* path_of(Kind kind) { return kind == Kind::order ? "/orders" : "/payouts"; }

std::string padded(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%05d", n);
  return buf;
}

// Which requests are sent twice: a deterministic spread of `percent` of them, alternating
// between "at the same time" and "afterwards".
Resend resend_of(int index, int percent, int& chosen) {
  if (percent <= 0) return Resend::none;
  // Choose index i when floor((i+1)*p/100) > floor(i*p/100): exactly p% of any prefix, spread out.
  if ((index + 1) * percent / 100 == index * percent / 100) return Resend::none;
  return chosen++ % 2 == 0 ? Resend::concurrent : Resend::after;
}

std::string error_code_of(const std::string& body) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_object() && doc.contains("error") && doc["error"].is_object()) {
    return doc["error"].value("code", "");
  }
  return "";
}

}  // namespace

Driver::Driver(DriverOptions options) : options_(std::move(options)) {
  // Payouts are spread among the orders, one after every orders/payouts orders.
  const int total = options_.orders + options_.payouts;
  int chosen = 0, orders = 0, payouts = 0;
  for (int i = 0; i < total; ++i) {
    const bool payout_turn =
        payouts < options_.payouts &&
        (orders >= options_.orders || static_cast<long long>(payouts + 1) * total <=
                                          static_cast<long long>(i + 1) * options_.payouts);
    Request r;
    if (payout_turn) {
      ++payouts;
      r.kind = Kind::payout;
      r.key = "demo-payout-" + padded(payouts);
      r.body = json{{"amount", 2500 + payouts},
                    {"currency", "EUR"},
                    {"destination", "NL91ABNA0417164300"}}
                   .dump();
    } else {
      ++orders;
      r.kind = Kind::order;
      r.key = "demo-order-" + padded(orders);
      r.body = json{{"amount", 1000 + orders % 9000},
                    {"currency", "EUR"},
                    {"reference", "inv-" + padded(orders)}}
                   .dump();
    }
    r.resend = resend_of(i, options_.resend_percent, chosen);
    requests_.push_back(std::move(r));
  }
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    first_pass_.push_back(i);
    if (requests_[i].resend == Resend::after) after_pass_.push_back(i);
  }
  total_units_ = static_cast<int>(first_pass_.size() + after_pass_.size());
}

Driver::~Driver() {
  if (thread_.joinable()) thread_.join();
}

void Driver::start() {
  thread_ = std::thread([this] {
    try {
      run();
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    finished_ = true;
  });
}

void Driver::join() {
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  if (error_) std::rethrow_exception(error_);
}

DriverStats Driver::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Driver::check_stop() const {
  if (options_.stop && options_.stop->load()) throw Interrupted();
  if (failed_) throw Failure("another client thread failed");
  if (Clock::now() > options_.deadline) {
    throw Failure("the orders API did not answer every request before the deadline (--timeout)");
  }
}

void Driver::pause(std::chrono::milliseconds wait) {
  const auto until = Clock::now() + wait;
  while (Clock::now() < until) {
    check_stop();
    std::this_thread::sleep_for(
        std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(20)));
  }
}

std::unique_ptr<httplib::Client> Driver::make_client() const {
  auto client = std::make_unique<httplib::Client>(options_.host, options_.port);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);  // else each answer waits for a delayed ACK (DESIGN.md)
  client->set_connection_timeout(kIoTimeout);
  client->set_read_timeout(kIoTimeout);
  client->set_write_timeout(kIoTimeout);
  client->set_bearer_token_auth(options_.api_key);
  return client;
}

void Driver::run() {
  auto pass = [this](const std::vector<std::size_t>& items, bool resends) {
    std::atomic<std::size_t> next{0};
    const int threads =
        std::max(1, std::min<int>(options_.concurrency, static_cast<int>(items.size())));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, resends] {
        try {
          work(items, resends, next);
        } catch (...) {
          std::lock_guard lock(mutex_);
          if (!error_) error_ = std::current_exception();
          failed_ = true;
        }
      });
    }
    for (std::thread& t : pool) t.join();
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  };
  pass(first_pass_, false);
  pass(after_pass_, true);  // every original has its final answer by now
}

void Driver::work(const std::vector<std::size_t>& items, bool resends,
                  std::atomic<std::size_t>& next) {
  auto client = make_client();
  for (std::size_t i = next++; i < items.size(); i = next++) {
    check_stop();
    Request& r = requests_[items[i]];
    if (resends) {
      send_after(r, *client);
    } else {
      process(r, *client);
    }
    ++done_units_;
  }
}

Driver::Answer Driver::post(httplib::Client& client, const Request& request) {
  const httplib::Headers headers{{"Idempotency-Key", request.key}};
  auto res = client.Post(path_of(request.kind), headers, request.body, "application/json");
  Answer a;
  if (!res) {
    a.error = httplib::to_string(res.error());
    return a;
  }
  a.status = res->status;
  a.body = res->body;
  a.replayed = res->get_header_value("Idempotent-Replayed") == "true";
  if (res->has_header("Retry-After")) {
    try {
      a.retry_after_s = std::stoi(res->get_header_value("Retry-After"));
    } catch (const std::exception&) {
      a.retry_after_s = 0;  // an HTTP date or junk: the client's own backoff applies
    }
  }
  return a;
}

void Driver::record(Request& r, const Answer& a, Role role) {
  std::lock_guard lock(mutex_);
  ++stats_.sends;
  if (role == Role::retry) ++stats_.client_retries;
  const std::string what =
      std::string("POST ") + path_of(r.kind) + " (Idempotency-Key " + r.key + ")";
  if (a.status == 201) {
    const json doc = json::parse(a.body, nullptr, false);
    if (!doc.is_object() || !doc.contains("id") || !doc["id"].is_string()) {
      throw Failure(what + " answered 201 without an id: " + a.body);
    }
    r.ids.insert(doc["id"].get<std::string>());
    if (r.kind == Kind::payout) r.downstream_key = doc.value("downstream_key", "");
    r.done = true;
    if (a.replayed) {
      ++stats_.replayed;
    } else {
      ++stats_.created;
      ++r.created;
    }
  } else if (a.status == 409 && error_code_of(a.body) == "idempotency_key_in_use") {
    ++stats_.in_progress;
  } else if (a.status >= 500) {
    ++stats_.server_errors;
    ++stats_.server_error_codes[std::to_string(a.status) + " " + error_code_of(a.body)];
  } else if (a.status == 0) {
    ++stats_.no_answer;
  } else {
    throw Failure(what + " answered " + std::to_string(a.status) + ": " + a.body);
  }
}

void Driver::process(Request& r, httplib::Client& client) {
  int retry_after_s = 0;
  if (r.resend == Resend::concurrent) {
    // Two clients released together: a double click, or a retry racing a slow first try.
    auto second = make_client();
    second->Get("/healthz");  // connect first, so both requests leave at the same moment
    std::latch gate(2);
    Answer resend;
    std::thread twin([&] {
      gate.arrive_and_wait();
      resend = post(*second, r);
    });
    gate.arrive_and_wait();
    const Answer original = post(client, r);
    twin.join();
    {
      std::lock_guard lock(mutex_);
      ++stats_.resends_concurrent;
    }
    record(r, original, Role::original);
    record(r, resend, Role::resend);
    retry_after_s = std::max(original.retry_after_s, resend.retry_after_s);
  } else {
    const Answer original = post(client, r);
    record(r, original, Role::original);
    retry_after_s = original.retry_after_s;
  }
  int tries = 0;
  while (!r.done) {  // no final answer yet: retry with the same key, as a client should
    check_stop();
    ++tries;
    std::chrono::milliseconds wait = std::chrono::milliseconds(100) * (1 << std::min(tries, 4));
    // A 409's Retry-After says when the other request's lease ends: wait that long (capped).
    wait = std::max<std::chrono::milliseconds>(wait, std::chrono::seconds(retry_after_s));
    pause(std::min<std::chrono::milliseconds>(wait, kMaxRetryWait));
    const Answer again = post(client, r);
    record(r, again, Role::retry);
    retry_after_s = again.retry_after_s;
  }
}

void Driver::send_after(Request& r, httplib::Client& client) {
  {
    std::lock_guard lock(mutex_);
    ++stats_.resends_after;
  }
  record(r, post(client, r), Role::resend);
}

}  // namespace webhooks::demo
