#include "webhooks/receiver/receiver.h"

#include <algorithm>
#include <cctype>

#include "dedup_writer.h"
#include "webhooks/ed25519.h"
#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/idempotency/lease_keeper.h"
#include "webhooks/idempotency/maintenance.h"
#include "webhooks/json_parse.h"
#include "webhooks/log.h"
#include "webhooks/secret.h"
#include "webhooks/verifier.h"
#include "webhooks/wire.h"

namespace webhooks::receiver {
namespace {

using idempotency::BeginOutcome;
using idempotency::BeginResult;
// A running handler's lease heartbeat; reset once the handler has returned.
using Heartbeat = std::optional<idempotency::LeaseKeeper::Hold>;

Answer error_answer(int status, std::string_view code, std::string_view message) {
  return Answer{status, {}, idempotency::error_body(code, message)};
}

Verifier make_verifier(const Config& config) {
  std::vector<Secret> secrets;
  for (const std::string& text : config.secrets) secrets.push_back(Secret::parse(text));
  std::vector<Ed25519PublicKey> keys;
  for (const std::string& text : config.public_keys) keys.push_back(Ed25519PublicKey::parse(text));
  return Verifier(secrets, std::move(keys), VerifyOptions{config.tolerance, true});
}

std::shared_ptr<db::Database> migrated(std::shared_ptr<db::Database> database, const Clock& clock) {
  database->migrate(clock.now_ms());
  return database;
}

// Thrown inside a transactional handler's transaction to roll it back without an error to log.
struct RollBack {};

}  // namespace

bool Headers::same_name(std::string_view a, std::string_view b) {
  // ASCII case folding: header names are ASCII (RFC 9110), and no locale is consulted per byte.
  constexpr auto lower = [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
  };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

template <typename F>
void Headers::each_value(std::string_view name, F&& f) const {
  struct Context {
    F& f;
    bool stopped = false;
  } context{f};
  if (visit_) {
    visit_(viewed_, name, &context, [](void* c, std::string_view value) {
      auto& ctx = *static_cast<Context*>(c);
      ctx.stopped = !ctx.f(value);
      return !ctx.stopped;
    });
    if (context.stopped) return;
  }
  for (const auto& [n, v] : entries_) {
    if (same_name(n, name) && !f(std::string_view(v))) return;
  }
}

std::optional<std::string_view> Headers::get(std::string_view name) const {
  std::optional<std::string_view> first;
  each_value(name, [&](std::string_view value) {
    first = value;
    return false;
  });
  return first;
}

std::optional<std::string> Headers::joined(std::string_view name) const {
  std::optional<std::string> out;
  each_value(name, [&](std::string_view value) {
    if (out) {
      out->push_back(' ');
      out->append(value);
    } else {
      out.emplace(value);
    }
    return true;
  });
  return out;
}

struct Receiver::Impl {
  Impl(Config c, std::shared_ptr<db::Database> database)
      : config(std::move(c)),
        clock(config.clock ? *config.clock : system_clock()),
        verifier(make_verifier(config)),
        db(migrated(std::move(database), clock)),
        store(db, idempotency::Settings{config.lease, config.ttl}),
        writer(store, config.group_commits),
        keeper(store, clock) {
    if (config.consumer.empty()) {
      throw Error(ErrorCode::invalid_argument, "the receiver's consumer name must not be empty");
    }
    if (config.maintenance_interval.count() > 0) {
      maintenance =
          std::make_unique<idempotency::Maintenance>(store, clock, config.maintenance_interval);
    }
  }

  // Steps 1-8 of the answer table. Returns the answer, or std::nullopt with `begun` and `event`
  // filled when the handler is to run.
  std::optional<Answer> admit(const Headers& headers, std::string_view body,
                              nlohmann::json& payload, Event& event, BeginResult& begun);
  // Steps 9-11: maps the handler's reply (or failure) to the answer and settles the record.
  Answer settle(const Event& event, const BeginResult& begun, std::optional<Reply> reply,
                std::string_view failure);
  void log(const Event& event, std::string_view outcome, int status);
  // admit, then `run(event, begun, hold)` when the handler is to run. `hold` keeps the lease
  // renewed; `run` resets it once the handler has returned, before the record is settled, so
  // that a renewal racing the settling write is not reported as a lost lease.
  template <typename Run>
  Answer handle_with(const Headers& headers, std::string_view body, Run&& run);

  Config config;
  const Clock& clock;
  Verifier verifier;
  std::shared_ptr<db::Database> db;
  idempotency::Store store;
  detail::DedupWriter writer;
  idempotency::LeaseKeeper keeper;
  std::unique_ptr<idempotency::Maintenance> maintenance;
};

void Receiver::Impl::log(const Event& event, std::string_view outcome, int status) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  log_event(spdlog::level::info, {{"event", "webhook"},
                                  {"consumer", config.consumer},
                                  {"event_id", event.id},
                                  {"delivery_id", event.delivery_id},
                                  {"type", event.type},
                                  {"outcome", outcome},
                                  {"status", status}});
}

std::optional<Answer> Receiver::Impl::admit(const Headers& headers, std::string_view body,
                                            nlohmann::json& payload, Event& event,
                                            BeginResult& begun) {
  event.delivery_id = headers.get(kHeaderDeliveryId).value_or("");
  if (body.size() > config.max_body_bytes) {
    log(event, "payload_too_large", 413);
    return error_answer(
        413, "payload_too_large",
        "the body is larger than " + std::to_string(config.max_body_bytes) + " bytes");
  }
  const std::optional<std::string> signature = headers.joined(kHeaderSignature);
  const SignedHeaders signed_headers{
      headers.get(kHeaderId), headers.get(kHeaderTimestamp),
      signature ? std::optional<std::string_view>(*signature) : std::nullopt};
  const VerifyResult verified = verifier.verify(signed_headers, body, clock.now_seconds());
  switch (verified.status) {
    case VerifyStatus::ok:
      break;
    case VerifyStatus::missing_header:
    case VerifyStatus::malformed_header:
      log(event, "headers_invalid", 400);
      return error_answer(400, "headers_invalid", verified.message);
    case VerifyStatus::no_matching_signature:
      log(event, "signature_invalid", 401);
      return error_answer(401, "signature_invalid", verified.message);
    case VerifyStatus::timestamp_too_old:
    case VerifyStatus::timestamp_too_new:
      log(event, "timestamp_out_of_tolerance", 401);
      return error_answer(401, "timestamp_out_of_tolerance", verified.message);
  }
  event.id = *signed_headers.id;
  event.timestamp = verified.timestamp;
  event.body = body;
  try {
    payload = parse_json(body);
  } catch (const Error& e) {
    log(event, "invalid_json", 400);
    return error_answer(400, "invalid_json", e.what());
  }
  if (!payload.is_object()) {
    log(event, "invalid_json", 400);
    return error_answer(400, "invalid_json", "the body is not a JSON object");
  }
  event.payload = &payload;
  if (const auto type = payload.find("type"); type != payload.end() && type->is_string()) {
    event.type = type->get_ref<const std::string&>();
  } else {
    event.type = headers.get(kHeaderEventType).value_or("");
  }

  begun = writer.begin(config.consumer, event.id, sha256_hex(body), clock.now_ms());
  event.attempt = begun.attempts;
  switch (begun.outcome) {
    case BeginOutcome::acquired:
    case BeginOutcome::reacquired:
      return std::nullopt;
    case BeginOutcome::mismatch:
      log(event, "event_id_reused", 422);
      return error_answer(422, "event_id_reused",
                          "this webhook-id was already received with a different body");
    case BeginOutcome::in_progress: {
      const UnixMillis left = begun.lease_expires_at - clock.now_ms();
      Answer busy = error_answer(409, "event_in_progress",
                                 "this event is being handled right now; retry later");
      busy.headers.emplace_back("Retry-After",
                                std::to_string(std::max<std::int64_t>(1, (left + 999) / 1000)));
      log(event, "event_in_progress", 409);
      return busy;
    }
    case BeginOutcome::replay: {
      Answer replayed = *begun.response;
      replayed.headers.emplace_back("Idempotent-Replayed", "true");
      log(event, "duplicate", replayed.status);
      return replayed;
    }
  }
  return std::nullopt;
}

Answer Receiver::Impl::settle(const Event& event, const BeginResult& begun,
                              std::optional<Reply> reply, std::string_view failure) {
  if (reply && idempotency::is_final_status(reply->status)) {
    Answer answer{reply->status, {}, std::move(reply->body)};
    if (answer.body.empty()) {
      answer.body = reply->status < 300 ? std::string("{\"received\":true}")
                                        : idempotency::error_body("event_rejected",
                                                                  "the handler rejected the event");
    }
    return answer;
  }
  const std::string why =
      reply ? "the handler answered " + std::to_string(reply->status) : std::string(failure);
  log_event(spdlog::level::warn, {{"event", "webhook_handler_failed"},
                                  {"consumer", config.consumer},
                                  {"event_id", event.id},
                                  {"delivery_id", event.delivery_id},
                                  {"attempt", begun.attempts},
                                  {"error", why}});
  try {
    writer.fail(begun.lease, clock.now_ms());
  } catch (const std::exception& e) {
    log_event(spdlog::level::err, {{"event", "webhook_fail_failed"}, {"error", e.what()}});
  }
  return error_answer(500, "handler_failed",
                      "the handler failed (" + why + "); the next delivery runs it again");
}

Receiver::Receiver(Config config)
    : Receiver(config, db::Database::open(config.store, config.database)) {}

Receiver::Receiver(Config config, std::shared_ptr<db::Database> database)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(database))) {}

Receiver::~Receiver() = default;

template <typename Run>
Answer Receiver::Impl::handle_with(const Headers& headers, std::string_view body, Run&& run) {
  nlohmann::json payload;
  Event event;
  BeginResult begun;
  try {
    if (auto answer = admit(headers, body, payload, event, begun)) return std::move(*answer);
  } catch (const std::exception& e) {
    log_event(spdlog::level::err, {{"event", "webhook_store_failed"}, {"error", e.what()}});
    return Answer{503,
                  {{"Retry-After", "1"}},
                  idempotency::error_body("storage_unavailable", "the dedup store is unavailable")};
  }
  Heartbeat hold;
  hold.emplace(keeper.hold(begun.lease));
  Answer answer = run(event, begun, hold);
  log(event,
      answer.status < 300                           ? "handled"
      : idempotency::is_final_status(answer.status) ? "rejected"
                                                    : "failed",
      answer.status);
  return answer;
}

namespace {

bool timed_out(const Config& config, std::chrono::steady_clock::time_point started) {
  return config.handler_timeout.count() > 0 &&
         std::chrono::steady_clock::now() - started > config.handler_timeout;
}

Answer store_failed(const std::exception& e) {
  log_event(spdlog::level::err, {{"event", "webhook_store_failed"}, {"error", e.what()}});
  return Answer{503,
                {{"Retry-After", "1"}},
                idempotency::error_body("storage_unavailable", "the dedup store is unavailable")};
}

Answer lease_lost() {
  return Answer{409,
                {{"Retry-After", "1"}},
                idempotency::error_body("event_in_progress",
                                        "the lease on this event was lost while the handler ran")};
}

}  // namespace

Answer Receiver::handle(const Headers& headers, std::string_view raw_body, const Handler& handler) {
  Impl& impl = *impl_;
  const auto run = [&](const Event& event, const BeginResult& begun, Heartbeat& hold) {
    const auto started = std::chrono::steady_clock::now();
    std::optional<Reply> reply;
    std::string failure;
    try {
      reply = handler(event);
    } catch (const std::exception& e) {
      failure = std::string("the handler threw: ") + e.what();
    } catch (...) {
      failure = "the handler threw";
    }
    if (reply && timed_out(impl.config, started)) {
      reply.reset();
      failure = "the handler timed out";
    }
    hold.reset();
    Answer answer = impl.settle(event, begun, std::move(reply), failure);
    if (answer.status == 500) return answer;
    try {
      if (!impl.writer.complete(begun.lease, answer, impl.clock.now_ms())) return lease_lost();
    } catch (const std::exception& e) {
      return store_failed(e);
    }
    return answer;
  };
  return impl.handle_with(headers, raw_body, run);
}

Answer Receiver::handle(const Headers& headers, std::string_view raw_body,
                        const TransactionalHandler& handler, const BeforeTransaction& before) {
  Impl& impl = *impl_;
  return impl.handle_with(
      headers, raw_body, [&](const Event& event, const BeginResult& begun, Heartbeat& hold) {
        const auto started = std::chrono::steady_clock::now();
        Answer answer;
        std::string failure;
        try {
          if (before) before(event);
          impl.db->transact([&](db::Transaction& tx) {
            Reply reply = handler(event, tx);
            hold.reset();
            if (timed_out(impl.config, started)) throw RollBack{};
            if (!idempotency::is_final_status(reply.status)) {
              answer.status = reply.status;
              throw RollBack{};
            }
            answer = impl.settle(event, begun, std::move(reply), {});
            if (!impl.store.complete(tx, begun.lease, answer, impl.clock.now_ms())) {
              answer = lease_lost();
              throw RollBack{};
            }
          });
          return answer;
        } catch (const RollBack&) {
          if (answer.status == 409) return answer;
          failure = answer.status ? "the handler answered " + std::to_string(answer.status)
                                  : "the handler timed out";
        } catch (const std::exception& e) {
          failure = std::string("the handler's transaction failed: ") + e.what();
        } catch (...) {
          failure = "the handler threw";
        }
        hold.reset();
        return impl.settle(event, begun, std::nullopt, failure);
      });
}

db::Database& Receiver::database() { return *impl_->db; }
std::shared_ptr<db::Database> Receiver::shared_database() const { return impl_->db; }
idempotency::Store& Receiver::store() { return impl_->store; }
const Config& Receiver::config() const { return impl_->config; }

}  // namespace webhooks::receiver
