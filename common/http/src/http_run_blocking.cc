// run_blocking (webhooks/http_server.h): a fiber's blocking call on the threads of
// fibers::run_on_thread (common/core/src/fiber_blocking.cc), which the PostgreSQL engine's
// statements share.
#include "detail/fiber.h"
#include "webhooks/http_server.h"

namespace webhooks::http {

void run_blocking(const std::function<void()>& work) { fibers::run_on_thread(work); }

}  // namespace webhooks::http
