#include "api/ingest.h"

#include <nlohmann/json.hpp>

#include "delivery/trace_context.h"
#include "webhooks/error.h"
#include "webhooks/json_body.h"
#include "webhooks/json_compact.h"

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

std::optional<EventInput> parse_event_input(JsonBody& body, std::string& error_code,
                                            std::string& message) {
  if (!body.is_object()) {
    error_code = "invalid_json";
    message = "the body must be a JSON object";
    return std::nullopt;
  }
  error_code = "invalid_request";
  JsonBody::Member* merchant = body.find("merchant_id");
  // A NUL ("\u0000") would be cut off by PostgreSQL's text parameters: "m1\u0000x" was stored,
  // and delivered, as merchant m1's event.
  if (merchant == nullptr || !merchant->string || merchant->string->empty() ||
      merchant->string->find('\0') != std::string::npos) {
    message = "merchant_id must be a non-empty string without NUL characters";
    return std::nullopt;
  }
  JsonBody::Member* type = body.find("type");
  if (type == nullptr || !type->string || !valid_type(*type->string)) {
    message = "type must be 1 to 255 printable ASCII characters without spaces";
    return std::nullopt;
  }
  const JsonBody::Member* data = body.find("data");
  if (data == nullptr || !body.text(*data).starts_with('{')) {
    message = "data must be a JSON object";
    return std::nullopt;
  }
  JsonBody::Member* key = body.find("ordering_key");
  if (key != nullptr && body.text(*key) != "null") {
    if (!key->string) {
      message = "ordering_key must be a string";
      return std::nullopt;
    }
    message = check_ordering_key(*key->string);
    if (!message.empty()) return std::nullopt;
  }
  error_code.clear();
  // The data as received: compact, number tokens byte for byte (a tree would round
  // 36893488147419103233 to a double). The strings are moved out of the read body, not copied.
  EventInput input;
  input.merchant_id = std::move(*merchant->string);
  input.type = std::move(*type->string);
  input.data = body.text(*data);
  if (key != nullptr && key->string) {
    input.context.ordering_key = std::move(*key->string);
  }
  return input;
}

std::string check_ordering_key(std::string_view key) {
  if (key.empty() || key.size() > 255) return "ordering_key must be 1 to 255 bytes";
  for (const char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return "ordering_key must not contain control characters";
  }
  return {};
}

Ingest::Ingest(Store& store, const Clock& clock, Metrics& metrics,
               std::function<void()> on_accepted)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      on_accepted_(std::move(on_accepted)),
      ids_(clock) {}

Accepted Ingest::publish(std::string_view merchant_id, std::string_view type,
                         std::string_view data_json, const EventContext& context) {
  std::string data;
  try {
    data = compact_json(data_json, kMaxJsonDepth - 1);  // the delivered body wraps it
  } catch (const Error&) {
    data.clear();
  }
  if (merchant_id.empty() || merchant_id.find('\0') != std::string_view::npos ||
      !valid_type(type) || !data.starts_with('{')) {
    throw Error(
        ErrorCode::invalid_argument,
        "an event needs a merchant_id without NUL characters, a type without spaces and a JSON "
        "object as data");
  }
  if (!context.ordering_key.empty()) {
    if (std::string problem = check_ordering_key(context.ordering_key); !problem.empty()) {
      throw Error(ErrorCode::invalid_argument, problem);
    }
  }
  EventInput input;
  input.merchant_id = std::string(merchant_id);
  input.type = std::string(type);
  input.data = std::move(data);
  input.context = context;
  Accepted accepted;
  store_.database().transact([&](db::Transaction& tx) { accepted = publish(tx, input); });
  metrics_.event_accepted();
  notify();
  return accepted;
}

Accepted Ingest::publish(db::Transaction& tx, const EventInput& input) {
  const UnixMillis now = clock_.now_ms();
  Event event;
  event.event_id = ids_.next();
  event.merchant_id = input.merchant_id;
  event.type = input.type;
  event.payload = input.data;
  event.created_at = now;
  event.idempotency_key = input.idempotency_key;
  event.ordering_key = input.context.ordering_key;
  if (valid_traceparent(input.context.traceparent)) {
    event.traceparent = input.context.traceparent;
    if (valid_tracestate(input.context.tracestate)) event.tracestate = input.context.tracestate;
  } else {
    event.traceparent = new_traceparent();
  }
  return Accepted{event.event_id, store_.insert_event(tx, event, now)};
}

void Ingest::notify() const {
  if (on_accepted_) on_accepted_();
}

idempotency::Response Ingest::handle(idempotency::Guard& guard,
                                     std::optional<std::string_view> idempotency_key,
                                     std::string_view body, std::string_view traceparent,
                                     std::string_view tracestate) {
  // One read of the body: its members, its data and (with a key) the fingerprint's canonical form.
  const bool keyed = idempotency_key.has_value();
  JsonBody read;
  try {
    read = read_json_body(body, keyed);
  } catch (const Error& e) {
    return idempotency::error_response(400, "invalid_json", e.what());
  }
  std::string code, message;
  std::optional<EventInput> input = parse_event_input(read, code, message);
  if (!input) return idempotency::error_response(400, code, message);
  input->context.traceparent = traceparent;
  input->context.tracestate = tracestate;
  idempotency::KeyedRequest request;
  if (keyed) {
    if (auto refused =
            idempotency::key_request(idempotency_key, "POST", "/v1/events", read, request)) {
      return std::move(*refused);
    }
    input->idempotency_key = request.key;  // kept with the event
  }
  bool made = false;
  idempotency::Response answer = guard.run_in_transaction(
      idempotency::component_scope("publisher", input->merchant_id), keyed ? &request : nullptr,
      "POST", "/v1/events", [&](db::Transaction& tx, const idempotency::BeginResult&) {
        const Accepted accepted = publish(tx, *input);
        made = true;
        const nlohmann::json json{{"event_id", accepted.event_id}, {"tasks", accepted.tasks}};
        return idempotency::Response{202, {}, json.dump()};
      });
  if (made && answer.status == 202) {  // made and committed (a failed commit is answered 503)
    metrics_.event_accepted();
    notify();
  }
  return answer;
}

}  // namespace webhooks::publisher
