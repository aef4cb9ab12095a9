#include "webhooks/publisher/ingest.h"

#include <algorithm>
#include <semaphore>
#include <nlohmann/json.hpp>

#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/json_compact.h"
#include "webhooks/json_parse.h"
#include "webhooks/log.h"

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
  error_code.clear();
  // The data as received: compact, number tokens byte for byte (a tree would round
  // 36893488147419103233 to a double). The body parsed above, so this cannot throw.
  std::optional<std::string> data_text = compact_json_member(body, "data");
  // The strings are moved out of the tree (read above without copies), not copied.
  return EventInput{std::move(merchant->get_ref<std::string&>()),
                    std::move(type->get_ref<std::string&>()),
                    data_text ? std::move(*data_text) : std::string("{}")};
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
  std::string data;
  try {
    data = compact_json(data_json, kMaxJsonDepth - 1);  // the delivered body wraps it
  } catch (const Error&) {
    data.clear();
  }
  if (merchant_id.empty() || merchant_id.find('\0') != std::string_view::npos ||
      !valid_type(type) || !data.starts_with('{')) {
    throw Error(ErrorCode::invalid_argument,
                "an event needs a merchant_id without NUL characters, a type without spaces and a JSON "
                "object as data");
  }
  const EventInput input{std::string(merchant_id), std::string(type), std::move(data)};
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

// One HTTP ingest waiting for (or written by) a grouped transaction.
struct Ingest::Queued {
  const EventInput* input = nullptr;
  std::string_view key, fingerprint;
  idempotency::Response response;
  bool made = false;  // an event was written (acquired or reacquired)
  std::optional<idempotency::BeginOutcome> outcome;
  UnixMillis age_ms = 0;
  bool done = false;              // under group_mutex_
  std::binary_semaphore wake{0};  // released when done, or when made the writer
};

namespace {

idempotency::Response error_response(int status, std::string_view code, std::string_view message) {
  return {status, {}, idempotency::error_body(code, message)};
}

}  // namespace

// Begins the record, and when acquired writes the event and completes the record, all in `tx`.
// The answers are the Guard's (guard.cc).
void Ingest::apply(db::Transaction& tx, idempotency::Store& records, Queued& q) {
  using idempotency::BeginOutcome;
  q.made = false;
  const UnixMillis now = clock_.now_ms();
  const idempotency::BeginResult begun =
      records.begin(tx, q.input->merchant_id, q.key, q.fingerprint, now);
  q.outcome = begun.outcome;
  q.age_ms = now - begun.created_at;
  switch (begun.outcome) {
    case BeginOutcome::replay:
      q.response = *begun.response;
      q.response.headers.emplace_back("Idempotent-Replayed", "true");
      return;
    case BeginOutcome::in_progress: {
      const std::int64_t seconds =
          std::max<std::int64_t>(1, (begun.lease_expires_at - now + 999) / 1000);
      q.response = error_response(409, "idempotency_key_in_use",
                                  "a request with this Idempotency-Key is still in progress");
      q.response.headers.emplace_back("Retry-After", std::to_string(seconds));
      return;
    }
    case BeginOutcome::mismatch:
      q.response = error_response(422, "idempotency_key_reused",
                                  "this Idempotency-Key was used with a different request");
      return;
    case BeginOutcome::acquired:
    case BeginOutcome::reacquired:
      break;
  }
  const Accepted accepted = publish(tx, *q.input);
  const nlohmann::json answer{{"event_id", accepted.event_id}, {"tasks", accepted.tasks}};
  q.response = idempotency::Response{202, {}, answer.dump()};
  if (!records.complete(tx, begun.lease, q.response, clock_.now_ms())) {
    throw Error(ErrorCode::conflict, "the idempotency lease was lost before the ingest committed");
  }
  q.made = true;
}

void Ingest::write_group(idempotency::Store& records, const std::vector<Queued*>& group) {
  db::Database& db = store_.database();
  try {
    db.transact([&](db::Transaction& tx) {
      for (Queued* q : group) apply(tx, records, *q);
    });
    return;
  } catch (const std::exception& e) {
    if (group.size() == 1) {
      log_event(spdlog::level::err, {{"event", "ingest_failed"}, {"error", e.what()}});
      group[0]->made = false;
      group[0]->response = error_response(503, "storage_unavailable", "the event store failed");
      group[0]->response.headers.emplace_back("Retry-After", "1");
      return;
    }
  }
  for (Queued* q : group) write_group(records, {q});  // alone, so a bad one fails alone
}

idempotency::Response Ingest::handle(idempotency::Guard& guard,
                                     std::optional<std::string_view> idempotency_key,
                                     std::string_view body) {
  std::string code, message;
  const std::optional<EventInput> input = parse_event_input(body, code, message);
  if (!input) return {400, {}, idempotency::error_body(code, message)};
  const idempotency::KeyCheck check = idempotency::parse_idempotency_key(idempotency_key);
  if (check.status == idempotency::KeyCheck::Status::missing) {
    return error_response(400, "idempotency_key_missing", check.message);
  }
  if (check.status == idempotency::KeyCheck::Status::invalid) {
    return error_response(400, "idempotency_key_invalid", check.message);
  }
  std::string fingerprint;
  try {
    fingerprint = request_fingerprint("POST", "/v1/events", body);
  } catch (const Error& e) {
    return error_response(400, "invalid_json", e.what());
  }

  Queued me;
  me.input = &*input;
  me.key = check.key;
  me.fingerprint = fingerprint;
  {
    std::unique_lock lock(group_mutex_);
    group_queue_.push_back(&me);
    if (group_writing_) {
      lock.unlock();
      me.wake.acquire();  // done, or made the writer
      lock.lock();
    } else {
      group_writing_ = true;
    }
    if (!me.done) {
      // The writer for everyone queued so far, this caller first.
      const std::size_t n = std::min(group_queue_.size(), kMaxGroup);
      std::vector<Queued*> group(group_queue_.begin(), group_queue_.begin() + n);
      group_queue_.erase(group_queue_.begin(), group_queue_.begin() + n);
      lock.unlock();
      write_group(guard.store(), group);
      lock.lock();
      for (Queued* q : group) {
        q->done = true;
        if (q != &me) q->wake.release();  // after this, *q may be gone
      }
      if (group_queue_.empty()) {
        group_writing_ = false;
      } else {
        group_queue_.front()->wake.release();  // the next writer; group_writing_ stays true
      }
    }
  }
  if (me.outcome && *me.outcome != idempotency::BeginOutcome::acquired) {
    log_event(spdlog::level::info, {{"event", "idempotency"},
                                    {"scope", input->merchant_id},
                                    {"key", check.key},
                                    {"path", "/v1/events"},
                                    {"outcome", to_string(*me.outcome)},
                                    {"age_ms", me.age_ms}});
  }
  if (me.made) {
    metrics_.event_accepted();
    notify();
  }
  return me.response;
}

}  // namespace webhooks::publisher
