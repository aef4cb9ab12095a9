#include "webhooks/idempotency/health.h"

#include "webhooks/error.h"
#include "webhooks/idempotency/answers.h"
#include "webhooks/log.h"

namespace webhooks::idempotency {

bool database_reachable(db::Database& db, httplib::Response& res,
                        std::chrono::milliseconds timeout) {
  std::string why;
  try {
    db.ping(timeout);
    return true;
  } catch (const Error& e) {
    why = e.what();
  }
  log_event(spdlog::level::warn, {{"event", "database_unreachable"}, {"error", why}});
  // The reason stays in the log: it may name the database's host and user, and /healthz needs
  // no token.
  write(storage_unavailable("the database is unreachable: SELECT 1 failed or took over " +
                            std::to_string(timeout.count()) + " ms"),
        res);
  return false;
}

}  // namespace webhooks::idempotency
