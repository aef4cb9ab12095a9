#include "webhooks/publisher/ingest.h"

#include <nlohmann/json.hpp>

#include "webhooks/error.h"

namespace webhooks::publisher {
namespace {

bool valid_type(std::string_view type) {
  if (type.empty() || type.size() > 255) return false;
  for (char c : type) {
    if (c <= 0x20 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

std::optional<EventInput> parse_event_input(std::string_view body, std::string& error_code,
                                            std::string& message) {
  const auto doc = nlohmann::ordered_json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    error_code = "invalid_json";
    message = "the body must be a JSON object";
    return std::nullopt;
  }
  error_code = "invalid_request";
  const auto merchant = doc.find("merchant_id");
  if (merchant == doc.end() || !merchant->is_string() || merchant->get<std::string>().empty()) {
    message = "merchant_id must be a non-empty string";
    return std::nullopt;
  }
  const auto type = doc.find("type");
  if (type == doc.end() || !type->is_string() || !valid_type(type->get<std::string>())) {
    message = "type must be 1 to 255 printable ASCII characters without spaces";
    return std::nullopt;
  }
  const auto data = doc.find("data");
  if (data == doc.end() || !data->is_object()) {
    message = "data must be a JSON object";
    return std::nullopt;
  }
  error_code.clear();
  return EventInput{merchant->get<std::string>(), type->get<std::string>(), data->dump()};
}

Ingest::Ingest(Store& store, const Clock& clock, Metrics& metrics,
               std::function<void()> on_accepted)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      on_accepted_(std::move(on_accepted)),
      ids_(clock) {}

Accepted Ingest::publish(std::string_view merchant_id, std::string_view type,
                         std::string_view data_json) {
  const auto data = nlohmann::ordered_json::parse(data_json, nullptr, false);
  if (merchant_id.empty() || !valid_type(type) || !data.is_object()) {
    throw Error(ErrorCode::invalid_argument,
                "an event needs a merchant_id, a type without spaces and a JSON object as data");
  }
  const EventInput input{std::string(merchant_id), std::string(type), data.dump()};
  Accepted accepted;
  store_.database().transact([&](db::Transaction& tx) { accepted = publish(tx, input); });
  metrics_.event_accepted();
  notify();
  return accepted;
}

Accepted Ingest::publish(db::Transaction& tx, const EventInput& input) {
  const UnixMillis now = clock_.now_ms();
  const Event event{ids_.next(), input.merchant_id, input.type, input.data, now};
  return Accepted{event.event_id, store_.insert_event(tx, event, now)};
}

void Ingest::notify() const {
  if (on_accepted_) on_accepted_();
}

idempotency::Response Ingest::handle(idempotency::Guard& guard,
                                     std::optional<std::string_view> idempotency_key,
                                     std::string_view body) {
  std::string code, message;
  const std::optional<EventInput> input = parse_event_input(body, code, message);
  if (!input) return {400, {}, idempotency::error_body(code, message)};
  bool made = false;
  idempotency::Response response = guard.run(
      input->merchant_id, idempotency_key, "POST", "/v1/events", body,
      [&](idempotency::Attempt& attempt) {
        return attempt.commit([&](db::Transaction& tx) {
          const Accepted accepted = publish(tx, *input);
          made = true;
          const nlohmann::json answer{{"event_id", accepted.event_id}, {"tasks", accepted.tasks}};
          return idempotency::Response{202, {}, answer.dump()};
        });
      });
  if (made && response.status == 202) {
    metrics_.event_accepted();
    notify();
  }
  return response;
}

}  // namespace webhooks::publisher
