#include "api/audit_log.h"

#include <string>
#include <vector>

#include "api/admin_json.h"
#include "webhooks/error.h"

namespace webhooks::publisher {
namespace {

constexpr std::string_view kInsert =
    "INSERT INTO publisher_audit_log (at, actor, role, action, target, outcome, status, detail, "
    "client) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
constexpr std::string_view kColumns =
    "SELECT id, at, actor, role, action, target, outcome, status, detail, client "
    "FROM publisher_audit_log";

AuditEntry entry_from(const db::Rows& rows, std::size_t r) {
  return {
      rows.integer(r, 0), rows.integer(r, 1), rows.text(r, 2), rows.text(r, 3),
      rows.text(r, 4),    rows.text(r, 5),    rows.text(r, 6), static_cast<int>(rows.integer(r, 7)),
      rows.text(r, 8),    rows.text(r, 9)};
}

}  // namespace

std::string_view audit_outcome(int status) {
  if (status >= 500 || status <= 0) return "failed";
  if (status >= 400) return "refused";
  return "succeeded";
}

bool AuditBudget::admit(UnixMillis now, std::int64_t& left_out) {
  std::lock_guard lock(mutex_);
  if (now / 60000 != minute_) {
    minute_ = now / 60000;
    used_ = 0;
  }
  if (used_ >= per_minute_) {
    ++left_out_;
    return false;
  }
  ++used_;
  left_out = left_out_;
  left_out_ = 0;
  return true;
}

void AuditLog::record(const AuditEntry& e) {
  db_.exec(kInsert, {std::int64_t{e.at}, e.actor, e.role, e.action, e.target, e.outcome,
                     std::int64_t{e.status}, e.detail, e.client});
}

AuditPage AuditLog::list(const AuditQuery& q) {
  if (q.limit < 1 || q.limit > 1000) {
    throw Error(ErrorCode::invalid_argument, "limit must be from 1 to 1000");
  }
  std::optional<std::int64_t> before;
  if (!q.cursor.empty()) {
    before = detail::parse_decimal(q.cursor, 1, INT64_MAX);
    if (!before) throw Error(ErrorCode::invalid_argument, "cursor is not one this listing gave");
  }
  // Each filter set adds one condition on its own parameter, in this order.
  std::vector<db::Param> params;
  std::string where;
  const auto condition = [&](std::string_view column_test, db::Param value) {
    params.push_back(value);
    where += where.empty() ? " WHERE " : " AND ";
    where += std::string(column_test) + " $" + std::to_string(params.size());
  };
  if (!q.actor.empty()) condition("actor =", std::string_view(q.actor));
  if (!q.action.empty()) condition("action =", std::string_view(q.action));
  if (!q.target.empty()) condition("target =", std::string_view(q.target));
  if (q.since) condition("at >=", std::int64_t{*q.since});
  if (q.until) condition("at <", std::int64_t{*q.until});
  if (before) condition("id <", *before);
  params.push_back(std::int64_t{q.limit} + 1);
  const std::string sql =
      std::string(kColumns) + where + " ORDER BY id DESC LIMIT $" + std::to_string(params.size());
  const db::Rows rows = db_.read(sql, params);
  AuditPage page;
  for (std::size_t r = 0; r < rows.size() && r < static_cast<std::size_t>(q.limit); ++r) {
    page.entries.push_back(entry_from(rows, r));
  }
  if (rows.size() > static_cast<std::size_t>(q.limit)) {
    page.next_cursor = std::to_string(page.entries.back().id);
  }
  return page;
}

}  // namespace webhooks::publisher
