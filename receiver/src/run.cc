// The handler run outside the record's transaction: under a durable claim (a lease committed
// first) or an in-process one (one commit records the answer) (receiver_impl.h).
#include "receiver_impl.h"

namespace webhooks::receiver {

using idempotency::BeginResult;
using idempotency::kEventVocabulary;

bool timed_out(const Config& config, std::chrono::steady_clock::time_point started) {
  return config.handler_timeout.count() > 0 &&
         std::chrono::steady_clock::now() - started > config.handler_timeout;
}

Answer Receiver::Impl::run_durable(const Event& event, const std::string& fingerprint,
                                   const Handler& handler) {
  BeginResult begun;
  try {
    group.run([&](db::Transaction& tx) {
      begun = store.begin(tx, config.consumer, event.id, fingerprint, clock.now_ms());
    });
  } catch (const std::exception& e) {
    return store_failed(e);
  }
  if (auto answer = settled(event, begun, fingerprint)) return std::move(*answer);
  Event running = event;
  running.attempt = begun.attempts;
  std::string why;
  std::optional<Reply> reply;
  {
    const idempotency::LeaseKeeper::Hold hold = keeper.hold(begun.lease);
    reply = call_handler(
        config, [&] { return handler(running); }, why);
  }
  if (!reply) return failed(running, why, &begun.lease, fingerprint);
  Answer answer = final_answer(std::move(*reply));
  bool kept = false;
  try {
    group.run([&](db::Transaction& tx) {
      kept = store.complete(tx, begun.lease, answer, clock.now_ms());
    });
  } catch (const std::exception& e) {
    return store_failed(e);
  }
  if (!kept) {
    log(running, "event_in_progress", 409);
    return idempotency::in_use(kEventVocabulary,
                               "the lease on this event was lost while the handler ran");
  }
  return handled(running, fingerprint, std::move(answer), {begun.created_at, begun.expires_at});
}

Answer Receiver::Impl::run_in_process(const Event& event, const std::string& fingerprint,
                                      const Handler& handler) {
  std::string why;
  std::optional<Reply> reply = call_handler(
      config, [&] { return handler(event); }, why);
  if (!reply) return failed(event, why, nullptr, fingerprint);
  Answer answer = final_answer(std::move(*reply));
  std::optional<Answer> other;
  RecordTimes record;
  try {
    group.run([&](db::Transaction& tx) {
      const BeginResult begun =
          store.begin_deferred(tx, config.consumer, event.id, fingerprint, clock.now_ms());
      // Settled meanwhile by another process (sharing the database by mistake).
      if ((other = idempotency::answer_for(begun, clock.now_ms(), kEventVocabulary))) return;
      store.complete_begun(tx, begun, fingerprint, answer, clock.now_ms());
      record = {begun.created_at, begun.expires_at};
    });
  } catch (const std::exception& e) {
    return store_failed(e);
  }
  if (other) return std::move(*other);
  return handled(event, fingerprint, std::move(answer), record);
}

}  // namespace webhooks::receiver
