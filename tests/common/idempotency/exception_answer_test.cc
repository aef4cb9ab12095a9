// The one mapping from a failed request's exception to its answer (idempotency::exception_answer)
// and the exception handler every server installs (idempotency::answer_exception, over
// cpp-httplib's Response): status, headers, body, and the "request_failed" log line.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "support/log_capture.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/answers.h"
#include "webhooks/idempotency/http.h"

using namespace webhooks;
using namespace webhooks::idempotency;

namespace {

template <typename E>
std::exception_ptr thrown(E e) {
  try {
    throw e;
  } catch (...) {
    return std::current_exception();
  }
}

}  // namespace

TEST_CASE("a storage error is 503 storage_unavailable with Retry-After: 1") {
  const ExceptionAnswer a =
      exception_answer(thrown(Error(ErrorCode::storage, "database is locked")));
  CHECK(a.response.status == 503);
  CHECK(a.response.headers ==
        std::vector<std::pair<std::string, std::string>>{{"Retry-After", "1"}});
  CHECK(
      a.response.body ==
      R"({"error":{"code":"storage_unavailable","message":"the database is unavailable; retry with the same request"}})");
  CHECK(a.code == "storage_unavailable");
  CHECK(a.what == "database is locked");
}

TEST_CASE("any other exception is 500 internal_error, its text kept for the log only") {
  const ExceptionAnswer a = exception_answer(thrown(std::runtime_error("table t has no column x")));
  CHECK(a.response.status == 500);
  CHECK(a.response.headers.empty());
  CHECK(
      a.response.body ==
      R"({"error":{"code":"internal_error","message":"the request failed; see the server's log"}})");
  CHECK(a.code == "internal_error");
  CHECK(a.what == "table t has no column x");

  const ExceptionAnswer other = exception_answer(thrown(Error(ErrorCode::conflict, "busy")));
  CHECK(other.response.status == 500);
  CHECK(other.what == "busy");

  const ExceptionAnswer odd = exception_answer(thrown(42));
  CHECK(odd.response.status == 500);
  CHECK(odd.what == "unknown error");
}

TEST_CASE("answer_exception logs request_failed and writes the answer") {
  test::LogCapture log;
  httplib::Request req;
  req.path = "/v1/events";
  httplib::Response res;
  answer_exception(req, res, thrown(Error(ErrorCode::storage, "disk I/O error")));
  CHECK(res.status == 503);
  CHECK(res.get_header_value("Retry-After") == "1");
  CHECK(res.get_header_value("Content-Type") == "application/json");
  CHECK(nlohmann::json::parse(res.body)["error"]["code"] == "storage_unavailable");
  const auto lines = log.lines("request_failed");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == nlohmann::json{{"event", "request_failed"},
                                   {"level", "error"},
                                   {"path", "/v1/events"},
                                   {"code", "storage_unavailable"},
                                   {"error", "disk I/O error"}});
}
