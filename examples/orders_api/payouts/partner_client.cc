#include "payouts/partner_client.h"

#include <httplib.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "webhooks/backoff.h"
#include "webhooks/error.h"
#include "webhooks/json_parse.h"
#include "webhooks/log.h"

namespace webhooks::orders {
namespace {

std::unique_ptr<httplib::Client> make_client(const PartnerOptions& options) {
  auto client = std::make_unique<httplib::Client>(options.url);
  client->set_connection_timeout(options.timeout);
  client->set_read_timeout(options.timeout);
  client->set_write_timeout(options.timeout);
  return client;
}

bool retryable(int status) {
  return status == 408 || status == 425 || status == 429 || status >= 500;
}

// The wait before retry `retry` of one call: options.backoff, doubled before each further one.
std::chrono::milliseconds retry_wait(const PartnerOptions& options, int retry) {
  return Backoff{.first = options.backoff, .max = std::chrono::hours(1)}.delay(retry);
}

std::string error_message(const std::string& body) {
  const nlohmann::json parsed = parse_json_or_discarded(body);
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_object()) {
    return parsed["error"].value("message", body);
  }
  return body.substr(0, 200);
}

// The answer's string "id" (a transfer's or a reversal's), or std::nullopt.
std::optional<std::string> answer_id(const nlohmann::json& answer) {
  if (answer.is_object() && answer.contains("id") && answer["id"].is_string()) {
    return answer["id"].get<std::string>();
  }
  return std::nullopt;
}

// How a retried call to the partner ended.
struct Call {
  enum class End { held, refused, unavailable } end = End::unavailable;
  int status = 0;     // the last HTTP status, 0 when the last try got none
  std::string id;     // held: the id of what the partner holds
  std::string error;  // refused, unavailable: what went wrong
  int tries = 0;
};

// The JSON holding the id of what the partner holds when an answer (its status and parsed body)
// is a success, else nullptr.
using HeldIn = std::function<const nlohmann::json*(int status, const nlohmann::json& parsed)>;

// POSTs `body` to `path` with X-Idempotency-Key `key`, up to options.attempts tries, each on a
// fresh connection (a dropped one is not reused), retry_wait between. A success without an id is
// retried with the error `missing_id`; a status neither a success nor retryable is refused with
// the partner's message. `failed_try(try, error)` runs after each try that settles nothing.
Call post_with_retries(const PartnerOptions& options, const std::string& path,
                       const std::string& key, const std::string& body, const HeldIn& held_in,
                       std::string_view missing_id,
                       const std::function<void(int, const std::string&)>& failed_try) {
  const httplib::Headers headers = {{"X-Idempotency-Key", key}};
  Call call;
  for (int attempt = 1; attempt <= options.attempts; ++attempt) {
    if (attempt > 1) std::this_thread::sleep_for(retry_wait(options, attempt - 1));
    call.tries = attempt;
    const httplib::Result answer =
        make_client(options)->Post(path, headers, body, "application/json");
    call.status = answer ? answer->status : 0;
    if (!answer) {
      call.error = "partner: " + httplib::to_string(answer.error());
    } else if (const nlohmann::json parsed = parse_json_or_discarded(answer->body);
               const nlohmann::json* held = held_in(answer->status, parsed)) {
      if (auto id = answer_id(*held)) {
        call.end = Call::End::held;
        call.id = std::move(*id);
        call.error.clear();
        return call;
      }
      call.error = "partner: " + std::string(missing_id);
    } else if (!retryable(answer->status)) {
      call.end = Call::End::refused;
      call.error = error_message(answer->body);
      return call;
    } else {
      call.error = "partner: HTTP " + std::to_string(answer->status);
    }
    failed_try(attempt, call.error);
  }
  return call;
}

// `call` as a TransferResult or a ReversalResult: held is `held`, its id in `id`.
template <class Result>
Result result_of(const Call& call, typename Result::Kind held, std::string Result::*id) {
  Result result;
  result.kind = call.end == Call::End::held      ? held
                : call.end == Call::End::refused ? Result::Kind::rejected
                                                 : Result::Kind::unavailable;
  result.status = call.status;
  result.*id = call.id;
  result.error = call.error;
  return result;
}

}  // namespace

PartnerClient::PartnerClient(PartnerOptions options) : options_(std::move(options)) {
  if (!options_.url.starts_with("http://") || !make_client(options_)->is_valid()) {
    throw Error(ErrorCode::invalid_argument,
                "--partner-url " + options_.url + ": expected http://HOST:PORT");
  }
  if (options_.attempts < 1) options_.attempts = 1;
}

TransferResult PartnerClient::create_transfer(const std::string& key, std::int64_t amount,
                                              const std::string& currency,
                                              const std::string& destination) {
  const std::string body =
      nlohmann::json{{"amount", amount}, {"currency", currency}, {"destination", destination}}
          .dump();
  const Call call = post_with_retries(
      options_, "/transfers", key, body,
      [](int status, const nlohmann::json& parsed) {
        return status >= 200 && status < 300 ? &parsed : nullptr;
      },
      "a 2xx answer without a transfer id",
      [&](int attempt, const std::string& error) {
        log_event(spdlog::level::warn, {{"event", "partner_try_failed"},
                                        {"downstream_key", key},
                                        {"try", attempt},
                                        {"error", error}});
      });
  TransferResult result =
      result_of(call, TransferResult::Kind::accepted, &TransferResult::transfer_id);
  result.tries = call.tries;
  return result;
}

ReversalResult PartnerClient::reverse_transfer(const std::string& transfer_id,
                                               const std::string& key) {
  const Call call = post_with_retries(
      options_, "/transfers/" + transfer_id + "/reversals", key, "{}",
      [](int status, const nlohmann::json& parsed) -> const nlohmann::json* {
        // 409 already_reversed names the reversal that undid the transfer
        if (status == 409 && parsed.is_object() && parsed.contains("reversal")) {
          return &parsed["reversal"];
        }
        return status == 200 || status == 201 ? &parsed : nullptr;
      },
      "an answer without a reversal id", [](int, const std::string&) {});
  return result_of(call, ReversalResult::Kind::reversed, &ReversalResult::reversal_id);
}

std::vector<PartnerTransfer> PartnerClient::list_transfers() {
  auto client = make_client(options_);
  const httplib::Result answer = client->Get("/transfers");
  if (!answer) {
    throw Error(ErrorCode::io,
                "GET " + options_.url + "/transfers: " + httplib::to_string(answer.error()));
  }
  if (answer->status != 200) {
    throw Error(ErrorCode::io,
                "GET " + options_.url + "/transfers: HTTP " + std::to_string(answer->status));
  }
  const nlohmann::json parsed = parse_json_or_discarded(answer->body);
  if (!parsed.is_object() || !parsed.contains("transfers") || !parsed["transfers"].is_array()) {
    throw Error(ErrorCode::io, "GET " + options_.url + "/transfers: not {\"transfers\": [...]}");
  }
  std::vector<PartnerTransfer> out;
  for (const auto& t : parsed["transfers"]) {
    const auto reversed_by = t.find("reversed_by");
    out.push_back({t.value("id", ""), t.value("idempotency_key", ""), t.value("currency", ""),
                   t.value("destination", ""), t.value("amount", std::int64_t{0}),
                   reversed_by != t.end() && reversed_by->is_string()
                       ? reversed_by->get<std::string>()
                       : std::string()});
  }
  return out;
}

}  // namespace webhooks::orders
