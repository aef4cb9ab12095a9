#include "webhooks/console/revocations.h"

namespace webhooks::console {

SqlRevocations::SqlRevocations(db::Database& db, std::string table, const Clock& clock)
    : db_(db),
      clock_(clock),
      delete_expired_("DELETE FROM " + table + " WHERE expires_at <= $1"),
      insert_("INSERT INTO " + table +
              " (session_id, expires_at) VALUES ($1, $2) ON CONFLICT (session_id) DO NOTHING"),
      select_("SELECT 1 FROM " + table + " WHERE session_id = $1") {}

void SqlRevocations::revoke(std::string_view id, std::int64_t expires_at) {
  const std::int64_t now = clock_.now_seconds();
  db_.transact([&](db::Transaction& tx) {
    tx.exec(delete_expired_, {now});
    tx.exec(insert_, {id, expires_at});
  });
}

bool SqlRevocations::revoked(std::string_view id) const { return !db_.read(select_, {id}).empty(); }

}  // namespace webhooks::console
