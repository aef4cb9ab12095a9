#include "webhooks/idempotency/answers.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "webhooks/error.h"
#include "webhooks/error_body.h"

namespace webhooks::idempotency {

Response error_response(int status, std::string_view code, std::string_view message) {
  return Response{status, {}, error_body(code, message)};
}

std::optional<Response> answer_for(const BeginResult& begun, UnixMillis now,
                                   const Vocabulary& words) {
  switch (begun.outcome) {
    case BeginOutcome::acquired:
    case BeginOutcome::reacquired:
      return std::nullopt;
    case BeginOutcome::replay: {
      Response replayed = *begun.response;
      replayed.headers.emplace_back("Idempotent-Replayed", "true");
      return replayed;
    }
    case BeginOutcome::in_progress: {
      const std::int64_t seconds =
          std::max<std::int64_t>(1, (begun.lease_expires_at - now + 999) / 1000);
      Response busy = error_response(409, words.in_use_code, words.in_use_message);
      busy.headers.emplace_back("Retry-After", std::to_string(seconds));
      return busy;
    }
    case BeginOutcome::mismatch:
      return error_response(422, words.reused_code, words.reused_message);
  }
  return std::nullopt;
}

Response in_use(const Vocabulary& words, std::string_view message) {
  Response busy = error_response(409, words.in_use_code, message);
  busy.headers.emplace_back("Retry-After", "1");
  return busy;
}

Response storage_unavailable(std::string_view message) {
  return Response{503, {{"Retry-After", "1"}}, error_body("storage_unavailable", message)};
}

ExceptionAnswer exception_answer(std::exception_ptr error) {
  std::string what = "unknown error";
  bool storage = false;
  try {
    if (error) std::rethrow_exception(error);
  } catch (const Error& e) {
    what = e.what();
    storage = e.code() == ErrorCode::storage;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  if (storage) return {storage_unavailable(), "storage_unavailable", std::move(what)};
  return {error_response(500, "internal_error", "the request failed; see the server's log"),
          "internal_error", std::move(what)};
}

}  // namespace webhooks::idempotency
