// The outcomes of a delivery: their answers, their log lines and the replay cache
// (receiver_impl.h).
#include "detail/log_batch.h"
#include "receiver_impl.h"
#include "webhooks/error_body.h"

namespace webhooks::receiver {

using idempotency::BeginOutcome;
using idempotency::BeginResult;
using idempotency::kEventVocabulary;

Answer store_failed(const std::exception& e) {
  log_event(spdlog::level::err, {{"event", "webhook_store_failed"}, {"error", e.what()}});
  return idempotency::storage_unavailable("the dedup store is unavailable");
}

void Receiver::Impl::log(const Event& event, std::string_view outcome, int status,
                         spdlog::level::level_enum level) {
  if (!log_enabled(level)) return;
  webhooks::detail::log_batched(level, {{"event", "webhook"},
                                        {"consumer", config.consumer},
                                        {"event_id", event.id},
                                        {"delivery_id", event.delivery_id},
                                        {"type", event.type},
                                        {"outcome", outcome},
                                        {"status", status}});
}

std::optional<Answer> Receiver::Impl::settled(const Event& event, const BeginResult& begun,
                                              std::string_view fingerprint) {
  std::optional<Answer> answer = idempotency::answer_for(begun, clock.now_ms(), kEventVocabulary);
  if (!answer) return std::nullopt;
  // Counted for the record's replays, conflicts and mismatches (flushed by the maintenance
  // thread), whether the answer came from the replay cache, a read or the group's begin.
  store.counts().add(config.consumer, event.id, begun.outcome);
  if (begun.outcome == BeginOutcome::replay && !fingerprint.empty()) {
    remember(event, fingerprint, *begun.response, {begun.created_at, begun.expires_at});
  }
  switch (begun.outcome) {
    case BeginOutcome::mismatch:
      log(event, "event_id_reused", 422);
      break;
    case BeginOutcome::in_progress:
      log(event, "event_in_progress", 409);
      break;
    default:
      log(event, "duplicate", answer->status);
      break;
  }
  return answer;
}

void Receiver::Impl::remember(const Event& event, std::string_view fingerprint,
                              const Answer& answer, const RecordTimes& record) {
  replays.remember(config.consumer, event.id, fingerprint, answer, record.created_at,
                   record.expires_at, event.type);
}

Answer Receiver::Impl::final_answer(Reply reply) {
  Answer answer{reply.status, {}, std::move(reply.body)};
  if (answer.body.empty()) {
    answer.body = reply.status < 300
                      ? std::string("{\"received\":true}")
                      : error_body("event_rejected", "the handler rejected the event");
  }
  return answer;
}

// A handled event is the `acquired` outcome, logged at debug only (docs/DESIGN.md: every outcome
// but acquired is logged); a rejected one at info.
Answer Receiver::Impl::handled(const Event& event, std::string_view fingerprint, Answer answer,
                               const RecordTimes& record) {
  if (answer.status < 300) {
    log(event, "handled", answer.status, spdlog::level::debug);
  } else {
    log(event, "rejected", answer.status);
  }
  remember(event, fingerprint, answer, record);
  return answer;
}

Answer Receiver::Impl::failed(const Event& event, std::string_view why,
                              const idempotency::Lease* lease, std::string_view fingerprint) {
  log_event(spdlog::level::warn, {{"event", "webhook_handler_failed"},
                                  {"consumer", config.consumer},
                                  {"event_id", event.id},
                                  {"delivery_id", event.delivery_id},
                                  {"attempt", event.attempt},
                                  {"error", why}});
  // The failed attempt is recorded (state failed), so the next delivery runs it again as attempt
  // + 1. A failure to record it changes nothing else: the next delivery runs it again anyway.
  try {
    group.run([&](db::Transaction& tx) {
      if (lease) {
        store.fail(tx, *lease, clock.now_ms());
        return;
      }
      const BeginResult begun =
          store.begin(tx, config.consumer, event.id, fingerprint, clock.now_ms());
      if (!begun.lease.token.empty()) store.fail(tx, begun.lease, clock.now_ms());
    });
  } catch (const std::exception& e) {
    log_event(spdlog::level::err, {{"event", "webhook_fail_failed"}, {"error", e.what()}});
  }
  log(event, "failed", 500);
  return idempotency::error_response(
      500, "handler_failed",
      "the handler failed (" + std::string(why) + "); the next delivery runs it again");
}

}  // namespace webhooks::receiver
