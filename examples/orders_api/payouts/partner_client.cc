#include "payouts/partner_client.h"

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

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
  const httplib::Headers headers = {{"X-Idempotency-Key", key}};
  TransferResult result;
  for (int attempt = 1; attempt <= options_.attempts; ++attempt) {
    if (attempt > 1) std::this_thread::sleep_for(retry_wait(options_, attempt - 1));
    result.tries = attempt;
    auto client = make_client(options_);  // a fresh connection: a dropped one is not reused
    const httplib::Result answer = client->Post("/transfers", headers, body, "application/json");
    if (!answer) {
      result.status = 0;
      result.error = "partner: " + httplib::to_string(answer.error());
    } else {
      result.status = answer->status;
      if (answer->status >= 200 && answer->status < 300) {
        const nlohmann::json parsed = parse_json_or_discarded(answer->body);
        if (parsed.is_object() && parsed.contains("id") && parsed["id"].is_string()) {
          result.kind = TransferResult::Kind::accepted;
          result.transfer_id = parsed["id"].get<std::string>();
          result.error.clear();
          return result;
        }
        result.error = "partner: a 2xx answer without a transfer id";
      } else if (!retryable(answer->status)) {
        result.kind = TransferResult::Kind::rejected;
        result.error = error_message(answer->body);
        return result;
      } else {
        result.error = "partner: HTTP " + std::to_string(answer->status);
      }
    }
    log_event(spdlog::level::warn, {{"event", "partner_try_failed"},
                                    {"downstream_key", key},
                                    {"try", attempt},
                                    {"error", result.error}});
  }
  result.kind = TransferResult::Kind::unavailable;
  return result;
}

ReversalResult PartnerClient::reverse_transfer(const std::string& transfer_id,
                                               const std::string& key) {
  const httplib::Headers headers = {{"X-Idempotency-Key", key}};
  const std::string path = "/transfers/" + transfer_id + "/reversals";
  ReversalResult result;
  for (int attempt = 1; attempt <= options_.attempts; ++attempt) {
    if (attempt > 1) std::this_thread::sleep_for(retry_wait(options_, attempt - 1));
    const httplib::Result answer =
        make_client(options_)->Post(path, headers, "{}", "application/json");
    result.status = answer ? answer->status : 0;
    if (!answer) {
      result.error = "partner: " + httplib::to_string(answer.error());
      continue;
    }
    const nlohmann::json parsed = parse_json_or_discarded(answer->body);
    const nlohmann::json* reversal = &parsed;
    if (answer->status == 409 && parsed.is_object() && parsed.contains("reversal")) {
      reversal = &parsed["reversal"];
    }
    if (answer->status == 200 || answer->status == 201 || reversal != &parsed) {
      if (reversal->is_object() && reversal->contains("id") && (*reversal)["id"].is_string()) {
        result.kind = ReversalResult::Kind::reversed;
        result.reversal_id = (*reversal)["id"].get<std::string>();
        result.error.clear();
        return result;
      }
      result.error = "partner: an answer without a reversal id";
    } else if (!retryable(answer->status)) {
      result.kind = ReversalResult::Kind::rejected;
      result.error = error_message(answer->body);
      return result;
    } else {
      result.error = "partner: HTTP " + std::to_string(answer->status);
    }
  }
  result.kind = ReversalResult::Kind::unavailable;
  return result;
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
