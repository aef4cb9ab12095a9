// The transactional path: the handler's writes and the event's record in one savepoint of a
// grouped transaction (receiver_impl.h).
#include "receiver_impl.h"
#include "webhooks/error.h"

namespace webhooks::receiver {
namespace {

// Thrown inside a transactional handler's savepoint to roll its writes back: why it failed.
struct HandlerFailed {
  std::string why;
};

}  // namespace

Answer Receiver::Impl::run_transactional(Event& event, const std::string& fingerprint,
                                         const TransactionalHandler& handler) {
  std::optional<Answer> answer;
  bool ran = false;  // the handler ran and its answer commits (else `answer` is a settled one)
  RecordTimes record;
  try {
    group.run([&](db::Transaction& tx) {
      const idempotency::BeginResult begun =
          store.begin_deferred(tx, config.consumer, event.id, fingerprint, clock.now_ms());
      if ((answer = settled(event, begun, fingerprint))) return;
      record = {begun.created_at, begun.expires_at};
      event.attempt = begun.attempts;
      std::string why;
      std::optional<Reply> reply = call_handler(
          config, [&] { return handler(event, tx); }, why);
      if (!reply) throw HandlerFailed{std::move(why)};
      answer = final_answer(std::move(*reply));
      if (!store.complete_begun(tx, begun, fingerprint, *answer, clock.now_ms())) {
        throw Error(ErrorCode::storage, "the dedup record changed inside its own transaction");
      }
      ran = true;
    });
  } catch (const HandlerFailed& failure) {
    return failed(event, failure.why, nullptr, fingerprint);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::conflict) {  // another process's transaction holds the event
      log(event, "event_in_progress", 409);
      return idempotency::in_use(idempotency::kEventVocabulary,
                                 idempotency::kEventVocabulary.in_use_message);
    }
    return store_failed(e);
  } catch (const std::exception& e) {
    return store_failed(e);
  }
  return ran ? handled(event, fingerprint, std::move(*answer), record) : std::move(*answer);
}

}  // namespace webhooks::receiver
