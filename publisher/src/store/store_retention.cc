#include <algorithm>
#include <string>
#include <vector>

#include "store/store_sql.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {
namespace sql = detail::sql;
namespace {

// The most ids one statement binds (the database layer takes at most 99 parameters).
constexpr std::size_t kIdsPerStatement = 90;

// `statement` followed by "($1, …, $n)", one placeholder per id.
std::string with_ids(std::string_view statement, std::size_t n) {
  std::string text(statement);
  text += '(';
  for (std::size_t i = 1; i <= n; ++i) {
    if (i > 1) text += ", ";
    text += '$' + std::to_string(i);
  }
  return text + ')';
}

}  // namespace

PurgeCounts Store::purge(UnixMillis before, int limit) {
  PurgeCounts counts;
  db_->transact([&](db::Transaction& tx) {
    counts = {};
    counts.audit =
        tx.exec(sql::kPurgeAudit, {std::int64_t{before}, std::int64_t{limit}}).affected();
    const db::Rows rows =
        tx.exec(sql::kSelectPurgeable, {std::int64_t{before}, std::int64_t{limit}});
    if (rows.empty()) return;
    for (std::size_t first = 0; first < rows.size(); first += kIdsPerStatement) {
      std::vector<db::Param> ids;
      for (std::size_t r = first; r < std::min(rows.size(), first + kIdsPerStatement); ++r) {
        ids.emplace_back(rows.text(r, 0));
      }
      // Tasks first (a replay that re-queued one meanwhile keeps it), then the attempts whose
      // task is gone, then the events left without tasks (the tasks reference them).
      counts.tasks += tx.exec(with_ids(sql::kPurgeTasks, ids.size()), ids).affected();
      counts.attempts += tx.exec(with_ids(sql::kPurgeAttempts, ids.size()), ids).affected();
      counts.events += tx.exec(with_ids(sql::kPurgeEvents, ids.size()), ids).affected();
    }
  });
  return counts;
}

}  // namespace webhooks::publisher
