// One libpq connection of the PostgreSQL engine (db_postgres.cc), every wait on it bounded by a
// deadline of the client's own: a server that stops answering (a frozen host or process, a
// network that drops packets) never answers its own statement_timeout, so the client gives up
// instead, and the connection is dropped. Private.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "detail/db_engines.h"

namespace webhooks::db::detail {

using PgClock = std::chrono::steady_clock;

struct PgConnection {
  PGconn* conn = nullptr;
  // SQL -> statement name, looked up by the caller's std::string_view without a copy.
  std::unordered_map<std::string, std::string, TextHash, std::equal_to<>> prepared;
  // The server said it closes the connection (a FATAL message), or a statement failed with a
  // connection error: never reused.
  bool broken = false;
  // A wait on it passed its deadline (the server stopped answering): broken too, and the call is
  // not run again on another connection (that would wait as long again).
  bool stalled = false;
  // The server-side statement_timeout set on it (milliseconds, 0: none): the client waits this
  // long plus kStallGrace for an answer.
  int statement_timeout_ms = 0;
  ~PgConnection();
};

// How much longer than the server's statement_timeout the client waits for an answer before it
// gives up on the connection: the server's own cancellation (SQLSTATE 57014, the connection kept)
// normally comes first.
inline constexpr std::chrono::milliseconds kStallGrace{250};

// The statement that lifts the statement bound for the rest of one transaction, server and client
// side alike: migrations (Database::migrate) run it first, since a migration may rewrite a large
// table for longer than any request should wait, and its advisory lock waits for another
// process's migrations.
inline constexpr std::string_view kUnboundedStatements = "SET LOCAL statement_timeout = 0";

// Opens a connection to `url` (a postgres:// URL; `described` names it in messages, without the
// password) in non-blocking mode, and sets its statement_timeout to `statement_timeout_ms` (0:
// the server's default). Gives up at `deadline`. Throws Error(storage) "cannot connect to
// PostgreSQL at …" with libpq's reason, or saying it did not answer in time.
std::unique_ptr<PgConnection> pg_connect(const std::string& url, const std::string& described,
                                         PgClock::time_point deadline, int statement_timeout_ms);

// Sends `sql` (a script when `params` is empty and it holds ';', else one statement, prepared
// once per connection) and waits for its result until the earlier of `deadline` and
// statement_timeout_ms + kStallGrace from now. Returns the rows. Throws Error(storage) with the
// server's message and SQLSTATE; on a connection error (class 08, 57P01-57P03, end of stream) it
// marks `c` broken, and past the deadline it marks it broken and stalled (the statement's fate
// unknown).
Rows pg_exec(PgConnection& c, std::string_view sql, std::span<const Param> params,
             PgClock::time_point deadline = PgClock::time_point::max());

// Whether a connection taken from the pool can still run a statement: not marked broken, and
// nothing unread on its socket says otherwise (an idle connection is sent nothing but a FATAL
// before the server closes it, or a notice). Does not wait.
bool pg_usable(PgConnection& c);

}  // namespace webhooks::db::detail
