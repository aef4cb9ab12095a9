// webhooks::PeriodicTask (common/core/include/webhooks/periodic_task.h): the step runs when woken
// or when its wait ends, a step that throws is logged and runs again, stop() ends a long wait and
// lets a running step finish, pause() ends at stop(). No test waits for time to pass: each long
// wait is an hour that only wake() or stop() can end, each event is awaited (bounded to 10 s).
#include "webhooks/periodic_task.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "support/log_capture.h"

namespace webhooks::test {
namespace {

using namespace std::chrono_literals;
constexpr auto kBound = 10s;  // how long a test waits for an event before failing

// Counts the step's runs; a test waits for the count to reach a value.
struct Runs {
  std::mutex mutex;
  std::condition_variable changed;
  int count = 0;
  void add() {
    {
      std::lock_guard lock(mutex);
      ++count;
    }
    changed.notify_all();
  }
  bool reaches(int n) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, kBound, [&] { return count >= n; });
  }
  int now() {
    std::lock_guard lock(mutex);
    return count;
  }
};

TEST_CASE("the step runs when woken, then waits what it returned", "[periodic_task]") {
  Runs runs;
  PeriodicTask task("test_failed",
                    [&] {
                      runs.add();
                      return std::chrono::milliseconds(1h);
                    },
                    {.first_wait = 1h});
  task.start();
  task.start();  // a second start does nothing
  CHECK(runs.now() == 0);
  task.wake();
  REQUIRE(runs.reaches(1));
  task.wake();
  REQUIRE(runs.reaches(2));
  task.stop();  // ends the hour's wait at once
  CHECK(runs.now() == 2);
  task.stop();  // idempotent
}

TEST_CASE("a step that returns 0 runs again at once; one that throws is logged",
          "[periodic_task]") {
  LogCapture log;
  Runs runs;
  PeriodicTask task("test_step_failed",
                    [&]() -> std::chrono::milliseconds {
                      runs.add();
                      if (runs.now() == 1) throw std::runtime_error("database gone");
                      return runs.now() < 3 ? 0ms : std::chrono::milliseconds(1h);
                    },
                    {.after_failure = 0ms});
  task.start();  // first_wait 0: at once
  REQUIRE(runs.reaches(3));
  task.stop();
  CHECK(runs.now() == 3);
  CHECK(log.lines("test_step_failed") ==
        std::vector<nlohmann::json>{
            {{"level", "error"}, {"event", "test_step_failed"}, {"error", "database gone"}}});
}

TEST_CASE("stop() lets a running step finish; pause() then returns false", "[periodic_task]") {
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<bool> paused;
  PeriodicTask* self = nullptr;
  PeriodicTask task("test_failed", [&] {
    entered.set_value();
    released.wait();
    paused.set_value(self->pause(1h));  // stop() came meanwhile: no wait
    return std::chrono::milliseconds(1h);
  });
  self = &task;
  task.start();
  REQUIRE(entered.get_future().wait_for(kBound) == std::future_status::ready);
  std::thread stopper([&] { task.stop(); });
  // stop() is waiting for the step; let the step go on once stop() has marked the task stopping.
  while (task.pause(0ms)) std::this_thread::yield();
  release.set_value();
  stopper.join();
  auto answer = paused.get_future();
  REQUIRE(answer.wait_for(0s) == std::future_status::ready);
  CHECK_FALSE(answer.get());
}

TEST_CASE("pause() without start() waits only its delay; start() after stop() runs again",
          "[periodic_task]") {
  Runs runs;
  PeriodicTask task("test_failed", [&] {
    runs.add();
    return std::chrono::milliseconds(1h);
  });
  CHECK(task.pause(0ms));
  CHECK(task.pause(1ms));
  task.start();
  REQUIRE(runs.reaches(1));
  task.stop();
  CHECK_FALSE(task.pause(1h));  // stopped: returns at once
  task.start();                 // the first wait (0) again
  REQUIRE(runs.reaches(2));
  task.stop();
}

}  // namespace
}  // namespace webhooks::test
