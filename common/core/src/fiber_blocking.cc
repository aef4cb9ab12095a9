// fibers::run_on_thread (detail/fiber.h): a fiber's blocking call on a few reused threads. Under
// http::run_blocking (webhooks/http_server.h) and the PostgreSQL engine's statements.
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "detail/fiber.h"

namespace webhooks::fibers {

namespace {

// The threads run_on_thread runs its calls on: started as calls need them, up to kBlockingThreads
// (a pool of threads' default size), and kept for the next calls; a call beyond waits, its fiber
// suspended, for one to come free, as a request waits for a pool thread.
class BlockingThreads {
 public:
  static constexpr std::size_t kBlockingThreads = 64;

  void run(const std::function<void()>& work) {
    Call call{&work, nullptr, {}};
    {
      std::lock_guard lock(mutex_);
      calls_.push_back(&call);
      // Every call queued needs a thread of its own: an idle thread counts until it wakes up and
      // takes one, so two calls made at once with one thread idle start a second thread rather
      // than one waiting for the other to finish.
      if (calls_.size() > idle_ && threads_ < kBlockingThreads) start_thread();
    }
    ready_.notify_one();
    call.done.wait();  // the fiber's worker thread serves other requests meanwhile
    if (call.error) std::rethrow_exception(call.error);
  }

 private:
  struct Call {
    const std::function<void()>* work;
    std::exception_ptr error;
    Wakeup done;
  };

  // Caller holds mutex_. When not even one thread can be started, the call is refused (thrown
  // to its caller); otherwise it waits for the threads there are.
  void start_thread() {
    try {
      std::thread([this] { serve(); }).detach();
      ++threads_;
    } catch (const std::system_error&) {
      if (threads_ > 0) return;
      calls_.pop_back();
      throw;
    }
  }

  void serve() {
    std::unique_lock lock(mutex_);
    while (true) {
      ++idle_;
      ready_.wait(lock, [this] { return !calls_.empty(); });
      --idle_;
      Call* call = calls_.front();
      calls_.pop_front();
      lock.unlock();
      try {
        (*call->work)();
      } catch (...) {
        call->error = std::current_exception();
      }
      call->done.notify();  // after this the call is gone
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Call*> calls_;
  std::size_t threads_ = 0, idle_ = 0;
};

}  // namespace

void run_on_thread(const std::function<void()>& work) {
  if (!can_suspend()) {  // a thread, or a fiber holding a transaction: right here
    work();
    return;
  }
  // Never destroyed: its threads wait on it until the process ends.
  static BlockingThreads* const threads = new BlockingThreads();
  threads->run(work);
}

}  // namespace webhooks::fibers
