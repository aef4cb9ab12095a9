// Fibers: the scheduler, its stacks and waits (detail/fiber.h); the stack switch itself is
// fiber_context.h's.
#include "detail/fiber.h"

#include <cxxabi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <exception>
#include <thread>

#include "fiber_context.h"
#include "webhooks/error.h"

#ifdef WEBHOOKS_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace webhooks::fibers {

// The C++ runtime's per-thread exception state (Itanium C++ ABI, section 2.5.1: __cxa_eh_globals,
// the exceptions being handled and the count of uncaught ones). A fiber that suspends inside a
// catch block leaves its exception on the thread's chain; another fiber ending its own catch
// meanwhile would pop (and free) the wrong one. So each switch swaps this state with the fiber's.
// Outside the anonymous namespace: Fiber (declared in detail/fiber.h) has a member of this type.
struct ExceptionState {
  void* caught_exceptions = nullptr;
  unsigned int uncaught_exceptions = 0;
};

namespace {

ExceptionState& thread_exception_state() {
  return *reinterpret_cast<ExceptionState*>(abi::__cxa_get_globals());
}

}  // namespace

struct Fiber {
  detail::FiberContext context;
  Scheduler* owner = nullptr;
  std::function<void()> work;
  bool ended = false;
  char* mapping = nullptr;  // guard page, then the stack
  std::size_t mapping_bytes = 0;
  char* stack = nullptr;  // past the guard page
  std::size_t stack_bytes = 0;
  std::array<void*, static_cast<std::size_t>(Slot::count)> locals{};
  ExceptionState exceptions;  // while switched out
  // AddressSanitizer: this fiber's fake stack while it is switched out, and the worker's stack.
  void* fake_stack = nullptr;
  const void* worker_bottom = nullptr;
  std::size_t worker_size = 0;

  ~Fiber() {
    if (mapping) ::munmap(mapping, mapping_bytes);
  }
};

namespace {

thread_local Fiber* running = nullptr;
thread_local int no_suspend_depth = 0;  // NoSuspend scopes open on this thread
thread_local std::array<void*, static_cast<std::size_t>(Slot::count)> thread_locals{};

// Ended fibers kept per worker with their stacks: a stack's pages once touched stay resident, as a
// pooled thread's do, so at most as many as a pool of threads would keep (2 x 32 = 64 threads).
constexpr std::size_t kPooledFibers = 32;

// AddressSanitizer must be told of each stack switch (before it, and on arrival), or it takes the
// fiber's frames for overflows of the thread's stack.
void before_switch([[maybe_unused]] void** fake_stack, [[maybe_unused]] const void* bottom,
                   [[maybe_unused]] std::size_t size) {
#ifdef WEBHOOKS_ASAN
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#endif
}
void after_switch([[maybe_unused]] void* fake_stack, [[maybe_unused]] const void** old_bottom,
                  [[maybe_unused]] std::size_t* old_size) {
#ifdef WEBHOOKS_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, old_bottom, old_size);
#endif
}

// From the fiber back to its worker (the fiber's context saved, unless it ended).
void switch_to_worker(Fiber& f) {
  before_switch(&f.fake_stack, f.worker_bottom, f.worker_size);
  f.context.switch_out();
  after_switch(f.fake_stack, &f.worker_bottom, &f.worker_size);
}

void fiber_main() {
  Fiber& f = *running;
  after_switch(nullptr, &f.worker_bottom, &f.worker_size);
  try {
    f.work();
  } catch (...) {
    std::terminate();  // as an exception leaving a thread's function
  }
  f.work = nullptr;
  f.ended = true;
  before_switch(nullptr, f.worker_bottom, f.worker_size);  // this stack's frames are done
}  // back to the worker's resume(), for good

}  // namespace

Fiber* current() noexcept { return running; }
bool can_suspend() noexcept { return running && no_suspend_depth == 0; }

NoSuspend::NoSuspend() noexcept { ++no_suspend_depth; }
NoSuspend::~NoSuspend() { --no_suspend_depth; }

void*& local(Slot slot) noexcept {
  auto& locals = running ? running->locals : thread_locals;
  return locals[static_cast<std::size_t>(slot)];
}

void suspend() noexcept { switch_to_worker(*running); }

void make_ready(Fiber& fiber) {
  Scheduler& owner = *fiber.owner;
  {
    std::lock_guard lock(owner.mutex_);
    owner.ready_.push_back(&fiber);
  }
  owner.cv_.notify_all();  // the worker may sleep on a condition variable other workers share
  if (owner.wake_ && std::this_thread::get_id() != owner.thread_) owner.wake_();
}

void yield() {
  Fiber* f = can_suspend() ? running : nullptr;
  if (!f) {
    std::this_thread::yield();
    return;
  }
  make_ready(*f);
  suspend();
}

void Wakeup::wait() {
  Fiber* f = can_suspend() ? running : nullptr;
  std::unique_lock lock(mutex_);
  if (!f) {
    cv_.wait(lock, [this] { return notified_; });
    return;
  }
  if (notified_) return;
  fiber_ = f;
  lock.unlock();
  suspend();    // a notify() meanwhile made it ready already: back at once
  lock.lock();  // notify() has let go of the mutex: *this may now be destroyed
}

void Wakeup::notify() {
  std::lock_guard lock(mutex_);
  notified_ = true;
  if (fiber_) {
    make_ready(*fiber_);
  } else {
    cv_.notify_one();
  }
}

Scheduler::Scheduler(std::size_t stack_bytes, std::mutex& mutex, std::condition_variable& cv,
                     std::function<void()> wake)
    : stack_bytes_(stack_bytes),
      mutex_(mutex),
      cv_(cv),
      wake_(std::move(wake)),
      thread_(std::this_thread::get_id()) {}

Scheduler::~Scheduler() = default;

Fiber* Scheduler::take_fiber() {
  if (!pool_.empty()) {
    Fiber* f = pool_.back().release();
    pool_.pop_back();
    return f;
  }
  auto f = std::make_unique<Fiber>();
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  f->mapping_bytes = (stack_bytes_ + page - 1) / page * page + page;
  void* mapping = ::mmap(nullptr, f->mapping_bytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) {
    f->mapping_bytes = 0;
    throw Error(ErrorCode::io, "cannot map a fiber's stack");
  }
  f->mapping = static_cast<char*>(mapping);
  f->stack = f->mapping + page;
  f->stack_bytes = f->mapping_bytes - page;
  ::mprotect(f->mapping, page, PROT_NONE);  // an overflow faults instead of writing past it
  f->owner = this;
  return f.release();
}

void Scheduler::spawn(std::function<void()> work) {
  Fiber* f = take_fiber();
  f->work = std::move(work);
  f->ended = false;
  f->locals = {};
  f->exceptions = {};
  f->fake_stack = nullptr;
  f->context.prepare(f->stack, f->stack_bytes, &fiber_main);
  ++live_;
  resume(*f);
}

void Scheduler::resume(Fiber& f) {
  running = &f;
  ExceptionState& exceptions = thread_exception_state();
  const ExceptionState worker_exceptions = exceptions;
  exceptions = f.exceptions;
  void* fake_stack = nullptr;
  before_switch(&fake_stack, f.stack, f.stack_bytes);
  f.context.switch_in();
  after_switch(fake_stack, nullptr, nullptr);
  f.exceptions = exceptions;  // as the fiber left them
  exceptions = worker_exceptions;
  running = nullptr;
  if (!f.ended) return;
  --live_;
  if (pool_.size() < kPooledFibers) {
    pool_.emplace_back(&f);
  } else {
    delete &f;
  }
}

std::size_t Scheduler::run() {
  std::deque<Fiber*> batch;
  {
    std::lock_guard lock(mutex_);
    batch.swap(ready_);  // the ones ready now; those made ready meanwhile wait for the next run
  }
  for (Fiber* f : batch) resume(*f);
  return batch.size();
}

}  // namespace webhooks::fibers
