// The fibers under webhooks::http::Server's fiber workers (common/src/detail/fiber.h): a fiber
// runs on its worker's thread until it suspends, is resumed only by make_ready (from any thread),
// keeps its own locals, and a Wakeup works between fibers and plain threads in both directions.
#include "detail/fiber.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace webhooks;

namespace {

struct Worker {
  std::mutex mutex;
  std::condition_variable cv;
  fibers::Scheduler fibers{256 * 1024, mutex, cv};

  // Runs ready fibers until `done` holds (bounded: 10 s), sleeping on cv while none is ready.
  template <typename Done>
  bool run_until(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      if (fibers.run() == 0) {
        std::unique_lock lock(mutex);
        cv.wait_for(lock, std::chrono::milliseconds(10), [&] { return fibers.ready(); });
      }
    }
    return true;
  }
};

}  // namespace

TEST_CASE("a fiber runs at spawn until it suspends, and again only once made ready") {
  Worker w;
  std::vector<std::string> steps;
  fibers::Fiber* parked = nullptr;
  CHECK(fibers::current() == nullptr);
  w.fibers.spawn([&] {
    steps.push_back("start");
    parked = fibers::current();
    fibers::suspend();
    steps.push_back("resumed");
  });
  CHECK(steps == std::vector<std::string>{"start"});
  CHECK(parked != nullptr);
  CHECK(w.fibers.live() == 1);
  CHECK(w.fibers.run() == 0);  // not ready: nothing runs
  CHECK(steps == std::vector<std::string>{"start"});
  fibers::make_ready(*parked);
  CHECK(w.fibers.run() == 1);
  CHECK(steps == std::vector<std::string>{"start", "resumed"});
  CHECK(w.fibers.live() == 0);
  CHECK(fibers::current() == nullptr);
}

TEST_CASE("a fiber made ready by another thread is resumed on its worker's thread") {
  Worker w;
  const auto worker_thread = std::this_thread::get_id();
  std::thread::id resumed_on;
  fibers::Fiber* parked = nullptr;
  w.fibers.spawn([&] {
    parked = fibers::current();
    fibers::suspend();
    resumed_on = std::this_thread::get_id();
  });
  std::thread other([&] { fibers::make_ready(*parked); });
  REQUIRE(w.run_until([&] { return w.fibers.live() == 0; }));
  other.join();
  CHECK(resumed_on == worker_thread);
}

TEST_CASE("yield: the yielding fiber goes on after what was spawned meanwhile") {
  Worker w;
  std::vector<int> order;
  w.fibers.spawn([&] {
    order.push_back(1);
    fibers::yield();
    order.push_back(4);
  });
  w.fibers.spawn([&] { order.push_back(2); });
  w.fibers.spawn([&] { order.push_back(3); });
  CHECK(order == std::vector<int>{1, 2, 3});
  CHECK(w.fibers.run() == 1);
  CHECK(order == std::vector<int>{1, 2, 3, 4});
  CHECK(w.fibers.live() == 0);
}

TEST_CASE("locals belong to the fiber, and outside fibers to the thread") {
  Worker w;
  int thread_value = 0, a_value = 0, b_value = 0;
  void*& slot = fibers::local(fibers::Slot::traffic);
  slot = &thread_value;
  void* a_saw_after = nullptr;
  void* b_saw_first = &b_value;
  fibers::Fiber* a = nullptr;
  w.fibers.spawn([&] {
    a = fibers::current();
    CHECK(fibers::local(fibers::Slot::traffic) == nullptr);  // a new fiber starts empty
    fibers::local(fibers::Slot::traffic) = &a_value;
    fibers::suspend();
    a_saw_after = fibers::local(fibers::Slot::traffic);
  });
  w.fibers.spawn([&] {
    b_saw_first = fibers::local(fibers::Slot::traffic);
    fibers::local(fibers::Slot::traffic) = &b_value;
  });
  fibers::make_ready(*a);
  w.fibers.run();
  CHECK(b_saw_first == nullptr);
  CHECK(a_saw_after == &a_value);
  CHECK(fibers::local(fibers::Slot::traffic) == &thread_value);
  fibers::local(fibers::Slot::traffic) = nullptr;
}

TEST_CASE(
    "Wakeup: a fiber waits for a thread, a thread for a fiber, and a notify before the wait is "
    "kept") {
  Worker w;
  fibers::Wakeup for_fiber, for_thread, early;
  std::vector<std::string> steps;
  early.notify();
  w.fibers.spawn([&] {
    early.wait();  // notified already: no suspension
    steps.push_back("early");
    for_fiber.wait();
    steps.push_back("fiber woken");
    for_thread.notify();
  });
  CHECK(steps == std::vector<std::string>{"early"});
  std::thread other([&] {
    for_fiber.notify();
    for_thread.wait();
  });
  REQUIRE(w.run_until([&] { return w.fibers.live() == 0; }));
  other.join();
  CHECK(steps == std::vector<std::string>{"early", "fiber woken"});
}

TEST_CASE("1,000 fibers one after another reuse a few stacks, and deep frames fit in 256 KiB") {
  Worker w;
  int done = 0;
  for (int i = 0; i < 1000; ++i) {
    w.fibers.spawn([&] {
      volatile char frame[128 * 1024];  // half the stack, touched at both ends
      frame[0] = 1;
      frame[sizeof frame - 1] = 1;
      ++done;
    });
  }
  CHECK(done == 1000);
  CHECK(w.fibers.live() == 0);
}

TEST_CASE("NoSuspend: inside it a fiber's wait holds its thread, as a plain thread's") {
  Worker w;
  fibers::Wakeup wakeup;
  bool can_suspend_inside = true, can_suspend_outside = false;
  std::thread::id waited_on;
  std::thread notifier;
  w.fibers.spawn([&] {
    can_suspend_outside = fibers::can_suspend();
    const fibers::NoSuspend holding;
    can_suspend_inside = fibers::can_suspend();
    notifier = std::thread([&] { wakeup.notify(); });
    wakeup.wait();  // on the thread's condition variable: spawn() returns only after it
    waited_on = std::this_thread::get_id();
  });
  notifier.join();
  CHECK(w.fibers.live() == 0);  // it never suspended
  CHECK(can_suspend_outside);
  CHECK_FALSE(can_suspend_inside);
  CHECK(waited_on == std::this_thread::get_id());
  CHECK_FALSE(fibers::can_suspend());  // a plain thread
}

TEST_CASE(
    "a fiber that suspends inside a catch block keeps its exception while others throw and catch") {
  Worker w;
  fibers::Fiber* a = nullptr;
  std::string a_saw, b_saw;
  w.fibers.spawn([&] {
    try {
      throw std::runtime_error("a's failure");
    } catch (const std::runtime_error& e) {
      a = fibers::current();
      fibers::suspend();  // inside the catch block, as a receiver recording a failed handler
      try {
        std::rethrow_exception(std::current_exception());
      } catch (const std::runtime_error& again) {
        a_saw = std::string(e.what()) + " / " + again.what();
      }
    }
  });
  w.fibers.spawn([&] {
    try {
      throw std::logic_error("b's failure");
    } catch (const std::logic_error& e) {
      b_saw = e.what();
    }
  });
  CHECK(b_saw == "b's failure");
  CHECK_FALSE(std::current_exception());  // the worker's own state: nothing being handled
  fibers::make_ready(*a);
  CHECK(w.fibers.run() == 1);
  CHECK(a_saw == "a's failure / a's failure");
  CHECK(w.fibers.live() == 0);
}
