// Fibers for webhooks::http::Server's fiber workers (ServerTuning::fiber_threads): user-space
// threads, each with its own stack, run by one worker thread's Scheduler. A fiber's handler
// waiting for a group commit (idempotency::GroupCommit) suspends the fiber instead of its thread,
// so the thread goes on with other requests: no kernel context switch per waiting request.
// docs/http-server.md, "Fiber workers" (and why Boost.Context's switch under a scheduler of ours).
//
// Internal to common/. Stacks switch with Boost.Context's fcontext, or in AddressSanitizer builds
// with POSIX ucontext, ASan told of every switch (common/core/src/fiber_context.h).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace webhooks::fibers {

class Scheduler;
struct Fiber;

// The fiber running on this thread, or nullptr on a plain thread (or a worker's own stack).
Fiber* current() noexcept;
// Whether the running fiber may suspend: on a fiber, outside every NoSuspend scope.
bool can_suspend() noexcept;

// While one is alive, the running fiber does not suspend: a Wakeup waits on its thread instead,
// as a plain thread's would. For code that holds a lock another fiber of the same thread may need
// (a database transaction holds the writer): suspended, it would wait for itself.
class NoSuspend {
 public:
  NoSuspend() noexcept;
  ~NoSuspend();
  NoSuspend(const NoSuspend&) = delete;
  NoSuspend& operator=(const NoSuspend&) = delete;
};

// Suspends the running fiber until make_ready(fiber) is called (possibly before this call, from
// any thread: the wake-up is not lost). Only on a fiber.
void suspend() noexcept;
// Makes a suspended (or suspending) fiber runnable again on its own worker thread. Thread-safe.
void make_ready(Fiber& fiber);
// Lets the worker run what else is ready or queued (new requests among them) before the running
// fiber goes on; on a plain thread, std::this_thread::yield().
void yield();

// On a fiber that may suspend (can_suspend()): runs `work` on one of up to 64 threads kept for
// reuse (started as calls need them; a call beyond waits for one to come free) while the fiber
// is suspended, so that its worker thread serves other fibers meanwhile; rethrows what `work`
// throws. Anywhere else (a plain thread, inside a NoSuspend scope) runs `work` right here. `work`
// may run on another thread than the caller: it must not rely on thread-local state (local()
// included). Throws std::system_error when not one thread can be started. Under
// http::run_blocking and the PostgreSQL engine's statements (webhooks/db.h).
void run_on_thread(const std::function<void()>& work);

// Pointers kept per fiber, and per thread outside fibers: what a request's handling keeps in a
// thread-local must live in its fiber instead, since other fibers run on the thread meanwhile.
enum class Slot { served_connection, traffic, count };
void*& local(Slot slot) noexcept;

// One-shot wake-up for a waiter that may be a fiber or a plain thread (or a fiber that may not
// suspend: it waits as a thread does): wait() returns once notify() has been called (before or
// after). The waiter owns it; notify() touches it only under its mutex, and wait() returns only
// after notify() released it, so the waiter may destroy it as soon as wait() returns.
class Wakeup {
 public:
  void wait();
  void notify();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  Fiber* fiber_ = nullptr;  // a fiber waiting
  bool notified_ = false;
};

// One worker thread's fibers. The worker calls spawn() for new work and run() to resume the
// fibers made ready since; while ready() is false it sleeps on `cv` (with `mutex`), which
// make_ready notifies, or in a wait of its own that `wake` interrupts.
class Scheduler {
 public:
  // `stack_bytes` per fiber (a guard page below each). `mutex` and `cv` are the worker's: they
  // guard the ready list, so a wake-up is seen by the worker's wait predicate. `wake`, when set,
  // is called after a fiber is made ready from another thread than the one constructing the
  // Scheduler (its worker): for a worker that sleeps in epoll_wait rather than on `cv`.
  Scheduler(std::size_t stack_bytes, std::mutex& mutex, std::condition_variable& cv,
            std::function<void()> wake = {});
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts `work` on a new fiber now, on the calling thread (the worker's), until it ends or
  // suspends. An exception leaving `work` ends the process (std::terminate), as on a thread.
  void spawn(std::function<void()> work);
  // Resumes every fiber made ready before the call; returns how many ran. Worker thread.
  std::size_t run();
  // Whether a fiber is ready to run. Caller holds `mutex`.
  bool ready() const { return !ready_.empty(); }
  // Fibers started and not ended.
  std::size_t live() const { return live_; }

 private:
  friend void make_ready(Fiber& fiber);
  void resume(Fiber& fiber);
  Fiber* take_fiber();

  std::size_t stack_bytes_;
  std::mutex& mutex_;
  std::condition_variable& cv_;
  std::function<void()> wake_;
  std::thread::id thread_;                    // the worker's
  std::deque<Fiber*> ready_;                  // under mutex_
  std::vector<std::unique_ptr<Fiber>> pool_;  // ended fibers, their stacks kept for reuse
  std::size_t live_ = 0;
};

}  // namespace webhooks::fibers
