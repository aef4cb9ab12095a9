// The demo's client load: orders and payouts against the orders API, each with its own
// Idempotency-Key, and a share of them sent again with the same key, either at the same moment as
// the original (two connections released together, so one of them usually meets the other's live
// lease: 409) or after the original was answered (a replay). A client that gets no final answer
// (409 with nobody else answered, 5xx, a lost connection) retries with the same key, honouring
// Retry-After, as a payment client should.
#pragma once

#include <httplib.h>

#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "failure.h"

namespace webhooks::demo {

enum class Kind { order, payout };
enum class Resend { none, concurrent, after };

// One logical request (one Idempotency-Key) and what its answers said.
struct Request {
  Kind kind = Kind::order;
  std::string key;
  std::string body;
  Resend resend = Resend::none;
  bool done = false;           // a 201 arrived (fresh or replayed)
  int created = 0;             // 201s without Idempotent-Replayed: must end as exactly 1
  std::set<std::string> ids;   // every id any 201 carried: must end as exactly one
  std::string downstream_key;  // payouts: the partner's X-Idempotency-Key
};

struct DriverOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string api_key;
  int orders = 0;
  int payouts = 0;
  int resend_percent = 0;
  int concurrency = 16;
  Clock::time_point deadline;
  const std::atomic<bool>* stop = nullptr;  // set on SIGINT/SIGTERM
};

struct DriverStats {
  int sends = 0;               // POSTs made
  int resends_concurrent = 0;  // duplicates released together with their original
  int resends_after = 0;       // duplicates sent after the original was answered
  int created = 0;             // 201 without Idempotent-Replayed
  int replayed = 0;            // 201 with Idempotent-Replayed: true
  int in_progress = 0;         // 409 idempotency_key_in_use
  int server_errors = 0;       // 5xx (e.g. 502 partner_unavailable), retried with the same key
  int no_answer = 0;           // connection failed or closed without an answer, retried
  int client_retries = 0;      // sends made because no final answer had arrived yet
  std::map<std::string, int> server_error_codes;  // "502 partner_unavailable" -> count
};

class Driver {
 public:
  explicit Driver(DriverOptions options);
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // Starts the load on background threads.
  void start();
  // True once every request is answered, or the load failed or was stopped.
  bool finished() const { return finished_.load(); }
  // Waits for the background threads; rethrows a failure of the load.
  void join();

  // Progress: units of work done and to do (one per logical request and per later resend).
  int done_units() const { return done_units_.load(); }
  int total_units() const { return total_units_; }

  const std::vector<Request>& requests() const { return requests_; }
  DriverStats stats() const;

 private:
  struct Answer {
    int status = 0;  // 0: no answer
    bool replayed = false;
    int retry_after_s = 0;
    std::string body;
    std::string error;  // no answer: why
  };
  enum class Role { original, resend, retry };

  void run();
  void work(const std::vector<std::size_t>& items, bool resends, std::atomic<std::size_t>& next);
  void process(Request& request, httplib::Client& client);
  void send_after(Request& request, httplib::Client& client);
  Answer post(httplib::Client& client, const Request& request);
  std::unique_ptr<httplib::Client> make_client() const;
  void record(Request& request, const Answer& answer, Role role);
  void pause(std::chrono::milliseconds wait);
  void check_stop() const;

  DriverOptions options_;
  std::vector<Request> requests_;
  std::vector<std::size_t> first_pass_, after_pass_;
  int total_units_ = 0;
  std::atomic<int> done_units_{0};
  std::atomic<bool> finished_{false};
  std::atomic<bool> failed_{false};
  mutable std::mutex mutex_;
  DriverStats stats_;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace webhooks::demo
