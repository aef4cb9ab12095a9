#include "webhooks/idempotency/http.h"

#include <optional>
#include <string>
#include <utility>

#include "webhooks/error.h"
#include "webhooks/http_server.h"
#include "webhooks/log.h"

namespace webhooks::idempotency {

void write(Response answer, httplib::Response& res) {
  res.status = answer.status;
  for (const auto& [name, value] : answer.headers) res.set_header(name, value);
  http::set_json_body(res, std::move(answer.body));
}

namespace {

// The request's Idempotency-Key header, or std::nullopt when absent.
std::optional<std::string_view> idempotency_key(const httplib::Request& req) {
  if (const auto it = req.headers.find("Idempotency-Key"); it != req.headers.end()) {
    return it->second;
  }
  return std::nullopt;
}

}  // namespace

namespace {

// The guard's answer to `req` written into `res`; an exception out of it as answer_exception says.
template <typename Run>
void answer(const httplib::Request& req, httplib::Response& res, Run&& run) {
  try {
    write(run(idempotency_key(req)), res);
  } catch (...) {
    answer_exception(req, res, std::current_exception());
  }
}

}  // namespace

void handle(Guard& guard, const httplib::Request& req, httplib::Response& res,
            std::string_view scope, const Operation& operation) {
  answer(req, res, [&](std::optional<std::string_view> key) {
    return guard.run(scope, key, req.method, req.path, req.body, operation);
  });
}

void handle_in_transaction(Guard& guard, const httplib::Request& req, httplib::Response& res,
                           std::string_view scope, const TransactionalOperation& operation) {
  answer(req, res, [&](std::optional<std::string_view> key) {
    return guard.run_in_transaction(scope, key, req.method, req.path, req.body, operation);
  });
}

void answer_exception(const httplib::Request& req, httplib::Response& res,
                      std::exception_ptr error) {
  ExceptionAnswer answer = exception_answer(error);
  log_event(spdlog::level::err, {{"event", "request_failed"},
                                 {"path", req.path},
                                 {"code", answer.code},
                                 {"error", answer.what}});
  write(std::move(answer.response), res);
}

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
