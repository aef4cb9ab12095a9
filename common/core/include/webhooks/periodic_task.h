// One background thread that runs a step again and again until stopped: the one home of the
// toolkit's loops (the publisher's retention and overview recount, the idempotency core's
// maintenance and lease renewal, the outbox relay, SQLite's background checkpoint).
//
//   PeriodicTask task("retention_failed", [&] {
//     retention.run_once();
//     return std::chrono::seconds(10);           // real time until the next run
//   }, {.first_wait = std::chrono::seconds(10)});
//   task.start();
//   task.wake();   // runs the step now instead of at the end of the wait
//   task.stop();   // also by the destructor
//
// The step returns how long to wait before it runs again (real time: a steady clock, not the
// toolkit's Clock, which only says what time the work is about: tests call the work directly).
// An exception from the step is logged as {"event": failure_event, "error": what()} at error
// level and the step runs again after `after_failure`. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace webhooks {

struct PeriodicTaskOptions {
  std::chrono::milliseconds first_wait{0};  // before the first run
  // The wait after a step that threw; 0: the wait the step last returned (or first_wait).
  std::chrono::milliseconds after_failure{0};
};

class PeriodicTask {
 public:
  // The wait before the next run, >= 0 (a longer one than about a year is cut to a year).
  using Step = std::function<std::chrono::milliseconds()>;

  // `failure_event`: the log event of a step that threw, e.g. "retention_failed".
  PeriodicTask(std::string failure_event, Step step, PeriodicTaskOptions options = {});
  ~PeriodicTask();  // stop()
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  // Starts the thread (again after stop()); does nothing while it runs.
  void start();
  // Ends the current wait and joins the thread: a running step finishes first (a step that
  // pauses, below, is woken). Does nothing when not started.
  void stop();
  // Ends the current wait: the step runs now (or, while it runs, once more right after).
  void wake();
  // For a step that pauses between batches: waits `delay` of real time unless stop() comes first.
  // Returns false once stopping. Works without start() too (then only `delay` ends it).
  bool pause(std::chrono::milliseconds delay);

 private:
  void run();

  const std::string failure_event_;
  const Step step_;
  const PeriodicTaskOptions options_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  bool woken_ = false;
  std::thread thread_;
};

}  // namespace webhooks
