// The stack switch under the fibers (fiber_context.h).
#include "fiber_context.h"

#include <exception>

namespace webhooks::fibers::detail {
namespace {

#ifdef WEBHOOKS_ASAN
// The worker's own context while one of its fibers runs.
thread_local ucontext_t worker_context;
thread_local FiberContext* starting = nullptr;
thread_local void (*starting_entry)() = nullptr;

void trampoline() {
  FiberContext& self = *starting;
  void (*entry)() = starting_entry;
  entry();
  self.switch_out();  // never switched in again: the fiber has ended
  std::terminate();
}
#else
namespace ctx = boost::context;

// The worker's continuation while one of its fibers runs.
thread_local ctx::fiber worker_context;

// The stacks are fiber.cc's own mappings (guard page included): nothing to allocate or free.
struct CallersStack {
  ctx::stack_context allocate() { std::terminate(); }  // never called: the stack is preallocated
  void deallocate(ctx::stack_context&) noexcept {}
};
#endif

}  // namespace

#ifdef WEBHOOKS_ASAN
void FiberContext::prepare(char* stack, std::size_t bytes, void (*entry)()) noexcept {
  ::getcontext(&context_);
  context_.uc_stack.ss_sp = stack;
  context_.uc_stack.ss_size = bytes;
  context_.uc_link = nullptr;
  ::makecontext(&context_, &trampoline, 0);
  starting = this;
  starting_entry = entry;
}

void FiberContext::switch_in() noexcept { ::swapcontext(&worker_context, &context_); }

void FiberContext::switch_out() noexcept { ::swapcontext(&context_, &worker_context); }
#else
void FiberContext::prepare(char* stack, std::size_t bytes, void (*entry)()) noexcept {
  ctx::stack_context whole;
  whole.sp = stack + bytes;
  whole.size = bytes;
  context_ = ctx::fiber(std::allocator_arg, ctx::preallocated(whole.sp, whole.size, whole),
                        CallersStack{}, [entry](ctx::fiber&& worker) {
                          worker_context = std::move(worker);
                          entry();
                          return std::move(worker_context);  // the fiber ends: to the worker
                        });
}

void FiberContext::switch_in() noexcept { context_ = std::move(context_).resume(); }

void FiberContext::switch_out() noexcept { worker_context = std::move(worker_context).resume(); }
#endif

}  // namespace webhooks::fibers::detail
