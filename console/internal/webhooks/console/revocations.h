// Server-side sign-out (docs/console.md, "Sessions and CSRF"): the sessions signed out before they
// expired, remembered until they expire, so a copy of a signed-out cookie is refused by every
// daemon on the same database.
//
//   SqlRevocations revoked(db, "publisher_revoked_sessions");  // the product's migration made it
//   sessions.use_revocations(revoked);                           // before serving
//
// A session is named by its id, the 32 hex digits of its cookie's nonce (Session::id).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "webhooks/clock.h"
#include "webhooks/db.h"

namespace webhooks::console {

// Where signed-out sessions are kept. Implementations must be thread-safe.
class Revocations {
 public:
  virtual ~Revocations() = default;
  // Records session `id` as signed out until `expires_at` (Unix seconds, the session's own
  // expiry); recording it again changes nothing. Throws Error(storage) when it cannot.
  virtual void revoke(std::string_view id, std::int64_t expires_at) = 0;
  // Whether session `id` was signed out. Throws Error(storage) when it cannot tell.
  virtual bool revoked(std::string_view id) const = 0;
};

// Revocations in a table of `db` that the product's own migration creates:
//   CREATE TABLE <table> (session_id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)
// (publisher: publisher_revoked_sessions; orders-api: orders_revoked_sessions). Each revoke also
// deletes the rows whose session has expired (expires_at <= now), so the table holds only the
// sessions signed out within the last session lifetime. SQLite and PostgreSQL alike.
class SqlRevocations final : public Revocations {
 public:
  // `db` and `clock` must outlive it; `table` is a fixed name (not user input: it is written into
  // the SQL).
  SqlRevocations(db::Database& db, std::string table, const Clock& clock);

  void revoke(std::string_view id, std::int64_t expires_at) override;
  bool revoked(std::string_view id) const override;

 private:
  db::Database& db_;
  const Clock& clock_;
  std::string delete_expired_, insert_, select_;
};

}  // namespace webhooks::console
