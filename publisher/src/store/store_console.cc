// The console's events listing (paged by a cursor) and replay-missing.
#include <algorithm>
#include <charconv>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "store/event_types_column.h"
#include "store/store_console_sql.h"
#include "webhooks/error.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {
using detail::parse_types;
namespace sql = detail::sql;

Event detail::event_from(const db::Rows& rows, std::size_t r, std::size_t first) {
  Event e;
  e.event_id = rows.text(r, first);
  e.merchant_id = rows.text(r, first + 1);
  e.type = rows.text(r, first + 2);
  e.payload = rows.text(r, first + 3);
  e.created_at = rows.integer(r, first + 4);
  e.idempotency_key = rows.text(r, first + 5);
  e.ordering_key = rows.text(r, first + 6);
  e.traceparent = rows.text(r, first + 7);
  e.tracestate = rows.text(r, first + 8);
  return e;
}

namespace {

// A position in the listing's order: (created_at, event_id), written "<created_at>.<event_id>".
struct Cursor {
  std::int64_t created_at = 0;
  std::string event_id;
};

std::string format_cursor(std::int64_t created_at, const std::string& event_id) {
  return std::to_string(created_at) + "." + event_id;
}

Cursor parse_cursor(const std::string& text) {
  Cursor c;
  const std::size_t dot = text.find('.');
  const bool number_ok =
      dot != std::string::npos && dot > 0 && dot <= 18 &&
      std::from_chars(text.data(), text.data() + dot, c.created_at).ptr == text.data() + dot &&
      text[0] != '-';
  c.event_id = number_ok ? text.substr(dot + 1) : std::string();
  bool id_ok = !c.event_id.empty() && c.event_id.size() <= 255;
  for (const char ch : c.event_id) id_ok = id_ok && ch > 0x20 && ch < 0x7f;
  if (!id_ok) {
    throw Error(ErrorCode::invalid_argument, "cursor must be a next_cursor a page returned");
  }
  return c;
}

// A statement put together from conditions whose placeholders are written "$?": each is
// numbered in turn.
class Statement {
 public:
  explicit Statement(std::string_view head) : text_(head) {}
  void add(std::string_view condition, std::initializer_list<db::Param> params) {
    for (std::size_t i = 0; i < condition.size(); ++i) {
      if (condition[i] == '$' && i + 1 < condition.size() && condition[i + 1] == '?') {
        text_ += "$" + std::to_string(++numbered_);
        ++i;
      } else {
        text_ += condition[i];
      }
    }
    params_.insert(params_.end(), params.begin(), params.end());
  }
  const std::string& text() const { return text_; }
  const std::vector<db::Param>& params() const { return params_; }

 private:
  std::string text_;
  std::vector<db::Param> params_;
  int numbered_ = 0;
};

// Each event's tasks counted by state, for at most kIdsPerCount events per statement (the SQLite
// layer binds at most 99 parameters), each statement with as many placeholders as the next power
// of two (its last id repeated), so a few statement texts serve every page size (PostgreSQL
// prepares each text once per connection).
constexpr std::size_t kIdsPerCount = 64;

void count_task_states(db::Database& db, std::span<const Event> events,
                       std::map<std::string, std::map<TaskState, int>>& out) {
  Statement counts("SELECT event_id, state, COUNT(*) FROM publisher_tasks WHERE event_id IN (");
  std::size_t slots = 1;
  while (slots < events.size()) slots *= 2;
  for (std::size_t i = 0; i < slots; ++i) {
    counts.add(i == 0 ? "$?" : ", $?", {events[std::min(i, events.size() - 1)].event_id});
  }
  counts.add(") GROUP BY event_id, state", {});
  const db::Rows rows = db.read(counts.text(), counts.params());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (auto s = parse_task_state(rows.text(r, 1))) {
      out[rows.text(r, 0)][*s] = static_cast<int>(rows.integer(r, 2));
    }
  }
}

std::map<std::string, std::map<TaskState, int>> count_task_states(
    db::Database& db, const std::vector<Event>& events) {
  std::map<std::string, std::map<TaskState, int>> out;
  for (std::size_t from = 0; from < events.size(); from += kIdsPerCount) {
    count_task_states(
        db,
        std::span<const Event>(events).subspan(from, std::min(kIdsPerCount, events.size() - from)),
        out);
  }
  return out;
}

// A listing's query and the walk it takes: the tasks of one state (`by_tasks`, `state` its name)
// or the events.
struct Listing {
  const EventQuery& q;
  bool by_tasks = false;
  std::string state;
  std::string_view time() const { return by_tasks ? "t.event_created_at" : "e.created_at"; }
  std::string_view id() const { return by_tasks ? "t.event_id" : "e.event_id"; }
};

// The since/until filters and the cursor (rows after it), on the walk's columns.
void add_range(Statement& s, const Listing& l, const std::optional<Cursor>& cursor) {
  const std::string time(l.time());
  if (l.q.since) s.add(" AND " + time + " >= $?", {*l.q.since});
  if (l.q.until) s.add(" AND " + time + " < $?", {*l.q.until});
  if (cursor) {
    s.add(" AND (" + time + ", " + std::string(l.id()) + ") < ($?, $?)",
          {cursor->created_at, cursor->event_id});
  }
}

// The position of the scan_limit-th task in the state after `cursor` (the tasks' index alone),
// or none when fewer remain.
std::optional<Cursor> scan_floor(db::Database& db, const Listing& l,
                                 const std::optional<Cursor>& cursor) {
  // A literal (one of four fixed words), so the state's partial index is taken.
  Statement s("SELECT t.event_created_at, t.event_id FROM publisher_tasks t WHERE t.state = '" +
              l.state + "'");
  add_range(s, l, cursor);
  s.add(std::string(sql::kOrderTasks) + " LIMIT 1 OFFSET $?", {std::int64_t{l.q.scan_limit - 1}});
  const db::Rows rows = db.read(s.text(), s.params());
  if (rows.empty()) return std::nullopt;
  return Cursor{rows.integer(0, 0), rows.text(0, 1)};
}

// One pass of the listing: at most `wanted` rows after `cursor`, none below `floor`.
Statement page_statement(const Listing& l, const std::optional<Cursor>& cursor,
                         const std::optional<Cursor>& floor, std::int64_t wanted) {
  Statement s(l.by_tasks ? sql::kPageFromTasks : sql::kPageFromEvents);
  if (l.by_tasks) s.add(" AND t.state = '" + l.state + "'", {});
  if (!l.q.merchant_id.empty()) s.add(" AND e.merchant_id = $?", {l.q.merchant_id});
  if (!l.q.type.empty()) s.add(" AND e.event_type = $?", {l.q.type});
  if (!l.q.q.empty()) s.add(sql::kSearchCondition, {l.q.q, l.q.q});
  if (l.q.state && !l.by_tasks) s.add(sql::kHasTaskInState, {l.state});
  add_range(s, l, cursor);
  if (floor) {
    s.add(" AND (t.event_created_at, t.event_id) >= ($?, $?)",
          {floor->created_at, floor->event_id});
  }
  s.add(l.by_tasks ? sql::kOrderTasks : sql::kOrderEvents, {});
  s.add(" LIMIT $?", {wanted});
  return s;
}

}  // namespace

EventPage Store::list_event_page(const EventQuery& q) {
  if (q.limit < 1 || q.limit > 1000) {
    throw Error(ErrorCode::invalid_argument, "limit must be from 1 to 1000");
  }
  if (q.scan_limit < 1) throw Error(ErrorCode::invalid_argument, "scan_limit must be at least 1");
  const Listing listing{q, q.state && q.q.empty(),
                        q.state ? std::string(to_string(*q.state)) : std::string()};
  std::optional<Cursor> cursor;
  if (!q.cursor.empty()) cursor = parse_cursor(q.cursor);
  // A state with a merchant or type walks that state's tasks keeping the events that match, which
  // for a rare merchant could read far: the page reads at most scan_limit tasks, down to `floor`.
  std::optional<Cursor> floor;
  if (listing.by_tasks && (!q.merchant_id.empty() || !q.type.empty())) {
    floor = scan_floor(*db_, listing, cursor);
  }
  EventPage page;
  // Rows in order, each event once; each pass goes on after the last row of the one before.
  // Only the tasks' walk repeats an event (once per task in the state), so only it passes again.
  for (int pass = 0; pass <= q.limit; ++pass) {
    const std::int64_t wanted = q.limit + 1 - static_cast<std::int64_t>(page.events.size());
    const Statement s = page_statement(listing, cursor, floor, wanted);
    const db::Rows rows = db_->read(s.text(), s.params());
    for (std::size_t r = 0; r < rows.size(); ++r) {
      Event e = detail::event_from(rows, r);
      if (!page.events.empty() && page.events.back().event_id == e.event_id) continue;
      page.events.push_back(std::move(e));
    }
    if (rows.size() < static_cast<std::size_t>(wanted) ||
        page.events.size() > static_cast<std::size_t>(q.limit)) {
      break;
    }
    cursor = Cursor{rows.integer(rows.size() - 1, 9), rows.text(rows.size() - 1, 0)};
  }
  if (page.events.size() > static_cast<std::size_t>(q.limit)) {
    page.events.resize(static_cast<std::size_t>(q.limit));
    const Event& last = page.events.back();
    page.next_cursor = format_cursor(last.created_at, last.event_id);
  } else if (floor) {
    page.next_cursor = format_cursor(floor->created_at, floor->event_id);  // older tasks remain
  }
  if (!page.events.empty()) page.task_states = count_task_states(*db_, page.events);
  return page;
}

std::optional<int> Store::replay_missing(const std::string& endpoint_id, UnixMillis since,
                                         UnixMillis now) {
  // Batches of kMissingBatch events, one short transaction each, so a replay over months of
  // events never holds the writers (delivery's records) for long. Each batch reads the endpoint
  // again (under a share lock on PostgreSQL), so its tasks are parked as the endpoint is then.
  // The lambda may run again when its transaction is retried: it only sets `batch`, which is
  // counted once committed.
  constexpr std::int64_t kMissingBatch = 500;
  struct Batch {
    bool endpoint = false;
    int created = 0;
    std::int64_t events = 0, last_created = 0;
    std::string last_id;
  };
  std::optional<int> created;
  Batch batch{true, 0, kMissingBatch, since, ""};
  while (batch.endpoint && batch.events == kMissingBatch) {
    const Batch after = batch;
    db_->transact([&](db::Transaction& tx) {
      batch = Batch{};
      const db::Rows endpoint =
          tx.exec(db_->engine() == db::Engine::postgres ? sql::kSelectMissingEndpointLocked
                                                        : sql::kSelectMissingEndpoint,
                  {endpoint_id});
      if (endpoint.empty()) return;  // unknown, or deleted meanwhile: what was made stays
      batch.endpoint = true;
      const std::vector<std::string> filter = parse_types(endpoint.text(0, 1));
      const std::int64_t parked = endpoint.integer(0, 2) != 0 ? 0 : 1;
      const db::Rows events = tx.exec(
          sql::kSelectMissingEvents,
          {endpoint.text(0, 0), endpoint_id, after.last_created, after.last_id, kMissingBatch});
      for (std::size_t r = 0; r < events.size(); ++r) {
        if (!filter_matches(filter, events.text(r, 1))) continue;
        batch.created += static_cast<int>(
            tx.exec(sql::kInsertMissingTask, {events.text(r, 0), endpoint_id, std::int64_t{now},
                                              events.integer(r, 2), parked})
                .affected());
      }
      batch.events = static_cast<std::int64_t>(events.size());
      if (!events.empty()) {
        batch.last_created = events.integer(events.size() - 1, 2);
        batch.last_id = events.text(events.size() - 1, 0);
      }
    });
    if (batch.endpoint) created = created.value_or(0) + batch.created;
  }
  return created;
}

}  // namespace webhooks::publisher
