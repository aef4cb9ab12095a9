// The stack switch under the fibers (fiber.cc): Boost.Context's fcontext, a few instructions with
// no system call; in AddressSanitizer builds POSIX ucontext instead (glibc's swapcontext, which
// makes an rt_sigprocmask system call at every switch), the one whose switches ASan can be told
// of: Debian builds Boost.Context with fcontext only (docs/http-server.md, "Fiber workers").
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define WEBHOOKS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEBHOOKS_ASAN 1
#endif
#endif

#ifdef WEBHOOKS_ASAN
#include <ucontext.h>
#else
#include <boost/context/fiber.hpp>
#endif

namespace webhooks::fibers::detail {

// One fiber's saved context while it is switched out. Not copyable; a context is prepared, then
// switched into and out of on one thread only (the worker thread that prepared it).
class FiberContext {
 public:
  FiberContext() = default;
  FiberContext(const FiberContext&) = delete;
  FiberContext& operator=(const FiberContext&) = delete;

  // Makes this context run entry() on the stack [stack, stack + bytes) when first switched in.
  // When entry() returns, the fiber has ended: the worker's switch_in() returns, and this context
  // may be prepared again (the stack reused). Throws nothing (the stack is the caller's).
  void prepare(char* stack, std::size_t bytes, void (*entry)()) noexcept;
  // On the worker thread, outside any fiber: runs this fiber until it calls switch_out() or its
  // entry() returns.
  void switch_in() noexcept;
  // On this fiber: back to the worker's switch_in(), until the worker switches this fiber in again.
  void switch_out() noexcept;

 private:
#ifdef WEBHOOKS_ASAN
  ucontext_t context_{};
#else
  boost::context::fiber context_;  // the fiber's continuation while it is switched out
#endif
};

}  // namespace webhooks::fibers::detail
