#include "store/event_types_column.h"
#include "store/store_console_sql.h"
#include "store/store_sql.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {
using detail::parse_types;
namespace sql = detail::sql;

int Store::insert_event(db::Transaction& tx, const Event& event, UnixMillis now) {
  tx.exec(
      sql::kInsertEvent,
      {event.event_id, event.merchant_id, event.type, event.payload, std::int64_t{event.created_at},
       db::text_or_null(event.idempotency_key), db::text_or_null(event.ordering_key),
       db::text_or_null(event.traceparent), db::text_or_null(event.tracestate)});
  const db::Rows endpoints = tx.exec(sql::kSelectFanOut, {event.merchant_id});
  int tasks = 0;
  for (std::size_t r = 0; r < endpoints.size(); ++r) {  // by endpoint id: the locks' order
    if (!filter_matches(parse_types(endpoints.text(r, 1)), event.type)) continue;
    const std::string& endpoint_id = endpoints.text(r, 0);
    if (parse_ordering(endpoints.text(r, 2)) == Ordering::fifo) {
      if (tx.engine() == db::Engine::postgres) {
        tx.exec(sql::kLockSequence, {endpoint_id, event.ordering_key});
      }
      tx.exec(sql::kInsertSequencedTask, {event.event_id, endpoint_id, std::int64_t{now},
                                          std::int64_t{event.created_at}, event.ordering_key});
    } else {
      tx.exec(sql::kInsertTask,
              {event.event_id, endpoint_id, std::int64_t{now}, std::int64_t{event.created_at}});
    }
    ++tasks;
  }
  return tasks;
}

std::optional<Event> Store::find_event(const std::string& event_id) {
  const db::Rows rows = db_->read(sql::kSelectEvent, {event_id});
  if (rows.empty()) return std::nullopt;
  return detail::event_from(rows, 0);
}

std::vector<Event> Store::list_events(const EventQuery& query) {
  return list_event_page(query).events;
}

std::vector<Task> Store::tasks_of_event(const std::string& event_id) {
  const db::Rows rows = db_->read(sql::kSelectEventTasks, {event_id});
  std::vector<Task> tasks;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    Task t;
    t.id = rows.integer(r, 0);
    t.event_id = rows.text(r, 1);
    t.endpoint_id = rows.text(r, 2);
    t.state = parse_task_state(rows.text(r, 3)).value_or(TaskState::pending);
    t.attempts = static_cast<int>(rows.integer(r, 4));
    t.next_attempt_at = rows.integer(r, 5);
    t.next_trigger = parse_trigger(rows.text(r, 6)).value_or(Trigger::scheduled);
    t.age_from = rows.integer(r, 7);
    t.last_status = static_cast<int>(rows.integer(r, 8));
    t.last_error = rows.text(r, 9);
    t.created_at = rows.integer(r, 10);
    t.updated_at = rows.integer(r, 11);
    t.parked = rows.integer(r, 12) == 1;
    t.waiting = rows.integer(r, 12) == 2;
    t.in_sequence = !rows.is_null(r, 13);
    tasks.push_back(std::move(t));
  }
  return tasks;
}

std::vector<DeliveryAttempt> Store::attempts_of_event(const std::string& event_id) {
  const db::Rows rows = db_->read(sql::kSelectEventAttempts, {event_id});
  std::vector<DeliveryAttempt> attempts;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    DeliveryAttempt a;
    a.delivery_id = rows.text(r, 0);
    a.task_id = rows.integer(r, 1);
    a.event_id = rows.text(r, 2);
    a.endpoint_id = rows.text(r, 3);
    a.attempt_number = static_cast<int>(rows.integer(r, 4));
    a.trigger = parse_trigger(rows.text(r, 5)).value_or(Trigger::scheduled);
    a.started_at = rows.integer(r, 6);
    a.status = static_cast<int>(rows.integer(r, 7));
    a.latency_ms = rows.integer(r, 8);
    a.error = parse_error_text(rows.text(r, 9), a.error_message);
    a.response_snippet = rows.text(r, 10);
    a.traceparent = rows.text(r, 11);
    attempts.push_back(std::move(a));
  }
  return attempts;
}

// Replay and recovery re-queue tasks parked if their endpoint is disabled; on PostgreSQL they first
// share-lock those endpoints, so a concurrent enable or disable cannot miss them (store_sql.h).
int Store::replay(const std::string& event_id, const std::string& endpoint_id, UnixMillis now) {
  int replayed = 0;
  db_->transact([&](db::Transaction& tx) {
    if (db_->engine() == db::Engine::postgres) {
      tx.exec(sql::kLockReplayEndpoints, {event_id, endpoint_id});
    }
    replayed = static_cast<int>(
        tx.exec(sql::kReplay, {event_id, std::int64_t{now}, endpoint_id}).affected());
  });
  return replayed;
}

int Store::recover(const std::string& endpoint_id, UnixMillis since, UnixMillis now) {
  int recovered = 0;
  db_->transact([&](db::Transaction& tx) {
    if (db_->engine() == db::Engine::postgres) tx.exec(sql::kLockRecoverEndpoint, {endpoint_id});
    recovered = static_cast<int>(
        tx.exec(sql::kRecover, {endpoint_id, std::int64_t{since}, std::int64_t{now}}).affected());
  });
  return recovered;
}

std::map<TaskState, std::int64_t> Store::count_tasks() {
  const db::Rows rows = db_->read(sql::kCountAllTasks);
  const std::int64_t pending = rows.integer(0, 0), delivering = rows.integer(0, 1),
                     dead = rows.integer(0, 2);
  return {{TaskState::pending, pending},
          {TaskState::delivering, delivering},
          {TaskState::succeeded,
           std::max<std::int64_t>(0, rows.integer(0, 3) - pending - delivering - dead)},
          {TaskState::dead, dead}};
}

}  // namespace webhooks::publisher
