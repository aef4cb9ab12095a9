// Server-side sign-out on a real database (SQLite file or the test PostgreSQL, by
// WEBHOOKS_TEST_ENGINE), through the publisher's real migration 0008_revoked_sessions: a revoked
// session is refused by every Sessions on the database, others are not, and each revoke purges
// the sessions that have expired.
#include "webhooks/console/revocations.h"

#include <catch2/catch.hpp>

#include "support/test_env.h"
#include "webhooks/console/session.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/publisher/schema.h"

using namespace std::chrono_literals;
using webhooks::console::Sessions;
using webhooks::console::SqlRevocations;

namespace {

std::int64_t rows(webhooks::db::Database& db) {
  return db.exec("SELECT COUNT(*) FROM publisher_revoked_sessions").integer(0, 0);
}

}  // namespace

TEST_CASE("revocations: a revoked session is refused by every daemon on the database") {
  const auto db = webhooks::test::open_database(
      "revocations", {webhooks::idempotency::schema(), webhooks::publisher::schema()});
  webhooks::FakeClock clock;
  // Two daemons on one database, each with its own Sessions and revocations.
  SqlRevocations revoked_a(*db, "publisher_revoked_sessions", clock);
  SqlRevocations revoked_b(*db, "publisher_revoked_sessions", clock);
  Sessions a = Sessions::single_token("admin-token", clock);
  Sessions b = Sessions::single_token("admin-token", clock);
  a.use_revocations(revoked_a);
  b.use_revocations(revoked_b);

  const std::string first = a.issue("");
  const std::string second = a.issue("");
  const auto session = a.verify(first);
  REQUIRE(session);
  CHECK(session->id == first.substr(first.find('.') + 1, 32));
  CHECK(session->expires_at == 1'700'000'000 + 43'200);
  CHECK(b.verify(first).has_value());

  revoked_a.revoke(session->id, session->expires_at);
  revoked_a.revoke(session->id, session->expires_at);  // again: no change, no error
  CHECK(rows(*db) == 1);
  CHECK(a.verify(first) == std::nullopt);
  CHECK(b.verify(first) == std::nullopt);  // the other daemon refuses it too
  CHECK(b.verify(second).has_value());     // another session is untouched
  CHECK(revoked_b.revoked(session->id));
  CHECK_FALSE(revoked_b.revoked(a.verify(second)->id));
}

TEST_CASE("revocations: each revoke deletes the sessions that have expired") {
  const auto db = webhooks::test::open_database(
      "revocations_purge", {webhooks::idempotency::schema(), webhooks::publisher::schema()});
  webhooks::FakeClock clock;  // 1,700,000,000 s
  SqlRevocations revoked(*db, "publisher_revoked_sessions", clock);
  revoked.revoke("00000000000000000000000000000001", 1'700'000'100);
  revoked.revoke("00000000000000000000000000000002", 1'700'000'200);
  CHECK(rows(*db) == 2);
  clock.advance(100s);  // the first has expired (expires_at <= now), the second not
  revoked.revoke("00000000000000000000000000000003", 1'700'043'300);
  CHECK(rows(*db) == 2);
  CHECK_FALSE(revoked.revoked("00000000000000000000000000000001"));
  CHECK(revoked.revoked("00000000000000000000000000000002"));
  CHECK(revoked.revoked("00000000000000000000000000000003"));
}
