// Store::lookup, Store::list and Store::flush_counts: the reads behind a merchant's page, and the
// counters they show (docs/idempotency.md, "Looking a key up").
#include <algorithm>
#include <charconv>
#include <limits>

#include "statements.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/json_parse.h"

namespace webhooks::idempotency {
namespace {

// The same on both engines.
#define WEBHOOKS_VIEW_COLUMNS                                                       \
  "idempotency_key, fingerprint, state, attempts, response_status, response_body, " \
  "created_at, updated_at, expires_at, route, replays, conflicts, mismatches, response_ref"

enum ViewColumn {
  kViewKey,
  kViewFingerprint,
  kViewState,
  kViewAttempts,
  kViewStatus,
  kViewBody,
  kViewCreated,
  kViewUpdated,
  kViewExpires,
  kViewRoute,
  kViewReplays,
  kViewConflicts,
  kViewMismatches,
  kViewRenderedFrom
};

constexpr std::string_view kLookup = "SELECT " WEBHOOKS_VIEW_COLUMNS
                                     " FROM idempotency_records WHERE scope = $1 AND "
                                     "idempotency_key = $2 AND expires_at > $3";

// scope, now, created_from, created_until, lowest state, highest state, cursor's created_at,
// cursor's key, limit. Served by the index (scope, created_at).
constexpr std::string_view kList =
    "SELECT " WEBHOOKS_VIEW_COLUMNS
    " FROM idempotency_records WHERE scope = $1 AND expires_at > $2 AND created_at >= $3 AND "
    "created_at < $4 AND state >= $5 AND state <= $6 AND (created_at < $7 OR (created_at = $7 "
    "AND idempotency_key < $8)) ORDER BY created_at DESC, idempotency_key DESC LIMIT $9";

constexpr std::string_view kAddCounts =
    "UPDATE idempotency_records SET replays = COALESCE(replays, 0) + $3, "
    "conflicts = COALESCE(conflicts, 0) + $4, mismatches = COALESCE(mismatches, 0) + $5 "
    "WHERE scope = $1 AND idempotency_key = $2";

// The "id" of a stored JSON object body, if it has a string or integer one.
std::optional<std::string> resource_id(std::string_view body) {
  if (body.empty() || body.front() != '{') return std::nullopt;
  try {
    const nlohmann::json parsed = parse_json(body);
    const auto it = parsed.find("id");
    if (it == parsed.end()) return std::nullopt;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_integer()) return it->dump();
  } catch (const std::exception&) {
    // Not JSON: no resource.
  }
  return std::nullopt;
}

// Row `i` of a view SELECT; `renderer` names the resource of an answer stored by reference.
RecordView view_of(const db::Rows& rows, std::size_t i, const ReplayRenderer* renderer) {
  RecordView view;
  view.key = rows.text(i, kViewKey);
  view.fingerprint = detail::to_hex(rows.text(i, kViewFingerprint));
  view.state = detail::parse_state(rows.integer(i, kViewState));
  view.attempts = static_cast<int>(rows.integer(i, kViewAttempts));
  if (!rows.is_null(i, kViewStatus) && view.state != State::in_progress) {
    view.status = static_cast<int>(rows.integer(i, kViewStatus));
  }
  view.created_at = rows.integer(i, kViewCreated);
  view.updated_at = rows.is_null(i, kViewUpdated) ? view.created_at : rows.integer(i, kViewUpdated);
  view.expires_at = rows.integer(i, kViewExpires);
  view.route = rows.text(i, kViewRoute);
  if (view.state == State::completed) {
    if (rows.is_null(i, kViewRenderedFrom)) {
      view.resource_id = resource_id(rows.text(i, kViewBody));
    } else if (renderer != nullptr) {
      view.resource_id = renderer->resource_id(rows.text(i, kViewRenderedFrom));
    }
  }
  view.replays = rows.integer(i, kViewReplays);
  view.conflicts = rows.integer(i, kViewConflicts);
  view.mismatches = rows.integer(i, kViewMismatches);
  return view;
}

// A cursor: "<created_at>.<key>" of the last record of the previous page.
struct Cursor {
  UnixMillis created_at = std::numeric_limits<UnixMillis>::max();
  std::string key;
};

Cursor parse_cursor(std::string_view text) {
  Cursor cursor;
  if (text.empty()) return cursor;
  const std::size_t dot = text.find('.');
  const char* end = text.data() + (dot == std::string_view::npos ? text.size() : dot);
  const auto [ptr, ec] = std::from_chars(text.data(), end, cursor.created_at);
  if (dot == std::string_view::npos || dot == 0 || ec != std::errc() || ptr != end ||
      cursor.created_at < 0 || dot + 1 == text.size()) {
    throw Error(ErrorCode::invalid_argument, "invalid cursor: pass next_cursor of a page");
  }
  cursor.key = text.substr(dot + 1);
  return cursor;
}

}  // namespace

std::optional<RecordView> Store::lookup(std::string_view scope, std::string_view key,
                                        UnixMillis now) {
  const db::Rows rows = db_->read(kLookup, {scope, key, now});
  if (rows.empty()) return std::nullopt;
  return view_of(rows, 0, settings_.renderer.get());
}

ListPage Store::list(std::string_view scope, const ListQuery& query, UnixMillis now) {
  if (query.limit < 1 || query.limit > kMaxListLimit) {
    throw Error(ErrorCode::invalid_argument, "limit must be 1 to " + std::to_string(kMaxListLimit));
  }
  const Cursor cursor = parse_cursor(query.cursor);
  std::int64_t lowest = detail::kInProgress, highest = detail::kFailed;
  if (query.state) {
    lowest = highest = *query.state == State::completed ? detail::kCompleted
                       : *query.state == State::failed  ? detail::kFailed
                                                        : detail::kInProgress;
  }
  const db::Rows rows = db_->read(
      kList, {scope, now, query.created_from, query.created_until, lowest, highest,
              cursor.created_at, std::string_view(cursor.key), std::int64_t{query.limit} + 1});
  ListPage page;
  const std::size_t shown = std::min(rows.size(), static_cast<std::size_t>(query.limit));
  for (std::size_t i = 0; i < shown; ++i) {
    page.records.push_back(view_of(rows, i, settings_.renderer.get()));
  }
  if (rows.size() > shown) {
    const RecordView& last = page.records.back();
    page.next_cursor = std::to_string(last.created_at) + "." + last.key;
  }
  return page;
}

int Store::flush_counts(std::size_t limit) {
  std::vector<OutcomeCounts::Increment> taken = counts_->take(limit);
  if (taken.empty()) return 0;
  // One order for every flusher, so two processes' flushes never wait on each other's rows in a
  // cycle (PostgreSQL).
  std::sort(taken.begin(), taken.end(), [](const auto& a, const auto& b) {
    return std::tie(a.scope, a.key) < std::tie(b.scope, b.key);
  });
  try {
    db_->transact([&](db::Transaction& tx) {
      for (const OutcomeCounts::Increment& add : taken) {
        tx.exec(kAddCounts, {add.scope, add.key, add.replays, add.conflicts, add.mismatches});
      }
    });
  } catch (...) {
    counts_->put_back(std::move(taken));
    throw;
  }
  return static_cast<int>(taken.size());
}

}  // namespace webhooks::idempotency
