#include "api/ingest.h"

#include <nlohmann/json.hpp>

#include "delivery/trace_context.h"
#include "webhooks/error.h"
#include "webhooks/json_compact.h"
#include "webhooks/json_parse.h"

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
  // A plain tree: only merchant_id, type and data's presence are read from it (data itself is
  // taken from the text below). nlohmann::ordered_json finds each key by a linear scan, so a data
  // object with 85,000 members (935 KB) took 10 s of CPU here.
  nlohmann::json doc;
  try {
    doc = parse_json(body);
  } catch (const Error& e) {
    error_code = "invalid_json";
    message = e.what();
    return std::nullopt;
  }
  if (!doc.is_object()) {
    error_code = "invalid_json";
    message = "the body must be a JSON object";
    return std::nullopt;
  }
  error_code = "invalid_request";
  const auto merchant = doc.find("merchant_id");
  // A NUL ("\u0000") would be cut off by PostgreSQL's text parameters: "m1\u0000x" was stored,
  // and delivered, as merchant m1's event.
  if (merchant == doc.end() || !merchant->is_string() ||
      merchant->get_ref<const std::string&>().empty() ||
      merchant->get_ref<const std::string&>().find('\0') != std::string::npos) {
    message = "merchant_id must be a non-empty string without NUL characters";
    return std::nullopt;
  }
  const auto type = doc.find("type");
  if (type == doc.end() || !type->is_string() || !valid_type(type->get_ref<const std::string&>())) {
    message = "type must be 1 to 255 printable ASCII characters without spaces";
    return std::nullopt;
  }
  const auto data = doc.find("data");
  if (data == doc.end() || !data->is_object()) {
    message = "data must be a JSON object";
    return std::nullopt;
  }
  std::string ordering_key;
  if (const auto key = doc.find("ordering_key"); key != doc.end() && !key->is_null()) {
    if (!key->is_string()) {
      message = "ordering_key must be a string";
      return std::nullopt;
    }
    message = check_ordering_key(key->get_ref<const std::string&>());
    if (!message.empty()) return std::nullopt;
    ordering_key = std::move(key->get_ref<std::string&>());
  }
  error_code.clear();
  // The data as received: compact, number tokens byte for byte (a tree would round
  // 36893488147419103233 to a double). The body parsed above, so this cannot throw.
  std::optional<std::string> data_text = compact_json_member(body, "data");
  // The strings are moved out of the tree (read above without copies), not copied.
  EventInput input;
  input.merchant_id = std::move(merchant->get_ref<std::string&>());
  input.type = std::move(type->get_ref<std::string&>());
  input.data = data_text ? std::move(*data_text) : std::string("{}");
  input.context.ordering_key = std::move(ordering_key);
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
  std::string code, message;
  std::optional<EventInput> input = parse_event_input(body, code, message);
  if (!input) return idempotency::error_response(400, code, message);
  input->context.traceparent = traceparent;
  input->context.tracestate = tracestate;
  // Kept with the event; the guard reads the header the same way and answers a bad one 400.
  idempotency::KeyCheck key = idempotency::parse_idempotency_key(idempotency_key);
  if (key.status == idempotency::KeyCheck::Status::ok) input->idempotency_key = std::move(key.key);
  bool made = false;
  idempotency::Response answer = guard.run_in_transaction(
      idempotency::component_scope("publisher", input->merchant_id), idempotency_key, "POST",
      "/v1/events", body, [&](db::Transaction& tx, const idempotency::BeginResult&) {
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
