#include "webhooks/idempotency/answers.h"

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "webhooks/error_body.h"
#include "webhooks/http_server.h"

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

void write(Response answer, httplib::Response& res) {
  res.status = answer.status;
  for (const auto& [name, value] : answer.headers) res.set_header(name, value);
  http::set_json_body(res, std::move(answer.body));
}

}  // namespace webhooks::idempotency
