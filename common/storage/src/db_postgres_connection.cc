// One libpq connection with every wait bounded (detail/pg_connection.h): libpq's asynchronous
// calls (PQconnectStartParams, PQsendQueryPrepared, …) on a non-blocking socket, and poll(2) with
// the client's deadline between them.
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <optional>
#include <vector>

#include "detail/pg_connection.h"
#include "webhooks/error.h"

namespace webhooks::db::detail {
namespace {

using std::chrono::milliseconds;

// Messages the server sends outside a statement's result. A FATAL one (57P01 "terminating
// connection due to administrator command", a shutdown) precedes the end of the connection;
// others (NOTICEs such as "relation already exists, skipping") are dropped instead of printed.
void on_notice(void* arg, const PGresult* res) {
  const char* severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
  if (severity && (std::strcmp(severity, "FATAL") == 0 || std::strcmp(severity, "PANIC") == 0)) {
    static_cast<PgConnection*>(arg)->broken = true;
  }
}

// SQLSTATEs after which the connection is gone: class 08 (connection exception) and the
// operator-intervention ones that end the session (57P01 admin shutdown, 57P02 crash shutdown,
// 57P03 cannot connect now).
bool ends_connection(const std::string& state) {
  return state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03";
}

std::string trimmed(std::string message) {
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return message;
}

std::string in_sql(std::string_view sql) { return " in: " + std::string(sql.substr(0, 120)); }

long long millis_between(PgClock::time_point from, PgClock::time_point to) {
  return std::chrono::ceil<milliseconds>(to - from).count();
}

// Waits until the socket is ready for `events` (true; also when poll fails or the socket is
// closed: libpq then reports the error) or `deadline` passes (false).
bool wait_socket(PGconn* conn, short events, PgClock::time_point deadline) {
  const int fd = PQsocket(conn);
  if (fd < 0) return true;
  while (true) {
    const PgClock::time_point now = PgClock::now();
    if (now >= deadline) return false;
    const long long left = millis_between(now, deadline);
    pollfd socket{fd, events, 0};
    const int ready = ::poll(&socket, 1, left > INT_MAX ? -1 : static_cast<int>(left));
    if (ready > 0 || (ready < 0 && errno != EINTR)) return true;
  }
}

// The connection failed under a call (libpq's message): marked broken, thrown.
[[noreturn]] void lost(PgConnection& c, std::string_view sql) {
  c.broken = true;
  throw Error(ErrorCode::storage, "postgres: " + trimmed(PQerrorMessage(c.conn)) + in_sql(sql));
}

// No answer by the deadline: marked broken and stalled (dropped, not used again), thrown.
[[noreturn]] void stalled(PgConnection& c, std::string_view sql, PgClock::time_point start,
                          PgClock::time_point deadline) {
  c.broken = c.stalled = true;
  throw Error(ErrorCode::storage,
              "postgres: no answer within " + std::to_string(millis_between(start, deadline)) +
                  " ms (the server stopped answering; connection dropped)" + in_sql(sql));
}

// After a PQsend* call: its result (1: queued), then every byte of it written by the deadline.
void send(PgConnection& c, int queued, std::string_view sql, PgClock::time_point start,
          PgClock::time_point deadline) {
  if (!queued) lost(c, sql);
  while (true) {
    const int flushed = PQflush(c.conn);
    if (flushed == 0) return;
    if (flushed < 0) lost(c, sql);
    if (!wait_socket(c.conn, POLLOUT | POLLIN, deadline)) stalled(c, sql, start, deadline);
    if (PQconsumeInput(c.conn) == 0) lost(c, sql);
  }
}

// The result of what was sent, waited for until the deadline: the last one, or the first error
// (a script stops at its first error). Owned by the caller; nullptr when there was none.
PGresult* await(PgConnection& c, std::string_view sql, PgClock::time_point start,
                PgClock::time_point deadline) {
  PGresult* kept = nullptr;
  const auto failed = [](const PGresult* res) {
    const ExecStatusType status = PQresultStatus(res);
    return status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK;
  };
  while (true) {
    while (PQisBusy(c.conn)) {
      if (!wait_socket(c.conn, POLLIN, deadline)) {
        PQclear(kept);
        stalled(c, sql, start, deadline);
      }
      if (PQconsumeInput(c.conn) == 0) {
        PQclear(kept);
        lost(c, sql);
      }
    }
    PGresult* res = PQgetResult(c.conn);
    if (!res) return kept;
    if (kept && failed(kept)) {
      PQclear(res);
    } else {
      PQclear(kept);
      kept = res;
    }
  }
}

// The type OID of bytea (pg_type.h), whose cells arrive in text format: \x and hex digits.
constexpr Oid kByteaOid = 17;

// A bytea cell's raw bytes; std::nullopt when libpq cannot decode it (out of memory).
std::optional<std::string> unescape_bytea(const PGresult* res, int row, int col) {
  std::size_t size = 0;
  unsigned char* raw =
      PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(res, row, col)), &size);
  if (!raw) return std::nullopt;
  std::string bytes(reinterpret_cast<const char*>(raw), size);
  PQfreemem(raw);
  return bytes;
}

// The rows of `res` (freed here), or Error(storage) with the server's message and SQLSTATE.
Rows collect(PgConnection& c, PGresult* res, std::string_view sql) {
  const ExecStatusType status = PQresultStatus(res);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    const std::string message = trimmed(res ? PQresultErrorMessage(res) : PQerrorMessage(c.conn));
    const char* field = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    const std::string state = field ? field : "";  // copied: PQclear frees it
    PQclear(res);
    if (ends_connection(state) || PQstatus(c.conn) != CONNECTION_OK) c.broken = true;
    throw Error(
        ErrorCode::storage,
        "postgres: " + message + (state.empty() ? "" : " (SQLSTATE " + state + ")") + in_sql(sql));
  }
  const int rows = PQntuples(res), columns = PQnfields(res);
  std::vector<std::optional<std::string>> cells;
  cells.reserve(static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns));
  for (int r = 0; r < rows; ++r) {
    for (int col = 0; col < columns; ++col) {
      if (PQgetisnull(res, r, col)) {
        cells.emplace_back(std::nullopt);
      } else if (PQftype(res, col) == kByteaOid) {
        std::optional<std::string> bytes = unescape_bytea(res, r, col);
        if (!bytes) {
          PQclear(res);
          throw Error(ErrorCode::storage, "postgres: cannot decode a bytea value" + in_sql(sql));
        }
        cells.emplace_back(std::move(bytes));
      } else {
        cells.emplace_back(std::string(PQgetvalue(res, r, col),
                                       static_cast<std::size_t>(PQgetlength(res, r, col))));
      }
    }
  }
  const char* tuples = PQcmdTuples(res);
  const std::int64_t affected = tuples && *tuples ? std::stoll(tuples) : 0;
  PQclear(res);
  return Rows(static_cast<std::size_t>(columns), std::move(cells), affected);
}

// `sql` through the simple query protocol (several statements allowed), by the deadline.
Rows run_script(PgConnection& c, std::string_view sql, PgClock::time_point start,
                PgClock::time_point deadline) {
  send(c, PQsendQuery(c.conn, std::string(sql).c_str()), sql, start, deadline);
  return collect(c, await(c, sql, start, deadline), sql);
}

// The statement name of `sql` on `c`, prepared first if it is new, by the deadline.
const std::string& prepared(PgConnection& c, std::string_view sql, PgClock::time_point start,
                            PgClock::time_point deadline) {
  auto it = c.prepared.find(sql);
  if (it == c.prepared.end()) {
    std::string key(sql);
    const std::string name = "s" + std::to_string(c.prepared.size());
    send(c, PQsendPrepare(c.conn, name.c_str(), key.c_str(), 0, nullptr), sql, start, deadline);
    collect(c, await(c, sql, start, deadline), sql);
    it = c.prepared.emplace(std::move(key), name).first;
  }
  return it->second;
}

}  // namespace

PgConnection::~PgConnection() { PQfinish(conn); }

std::unique_ptr<PgConnection> pg_connect(const std::string& url, const std::string& described,
                                         PgClock::time_point deadline, int statement_timeout_ms) {
  const PgClock::time_point start = PgClock::now();
  const char* keys[] = {"dbname", "application_name", nullptr};
  const char* values[] = {url.c_str(), "webhooks", nullptr};
  auto c = std::make_unique<PgConnection>();
  c->conn = PQconnectStartParams(keys, values, 1);
  const auto fail = [&](const std::string& why) {
    throw Error(ErrorCode::storage, "cannot connect to PostgreSQL at " + described + ": " + why);
  };
  if (!c->conn) fail("out of memory");
  // libpq's loop (PQconnectPoll): wait for what it asks for, call it again, until OK or FAILED.
  PostgresPollingStatusType state = PGRES_POLLING_WRITING;
  if (PQstatus(c->conn) == CONNECTION_BAD) state = PGRES_POLLING_FAILED;
  while (state != PGRES_POLLING_OK) {
    if (state == PGRES_POLLING_FAILED) fail(trimmed(PQerrorMessage(c->conn)));
    if (!wait_socket(c->conn, state == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline)) {
      fail("no answer within " + std::to_string(millis_between(start, deadline)) + " ms");
    }
    state = PQconnectPoll(c->conn);
  }
  if (PQsetnonblocking(c->conn, 1) != 0) fail(trimmed(PQerrorMessage(c->conn)));
  PQsetNoticeReceiver(c->conn, on_notice, c.get());
  if (statement_timeout_ms > 0) {
    try {
      run_script(*c, "SET statement_timeout = " + std::to_string(statement_timeout_ms), start,
                 deadline);
    } catch (const Error& e) {
      fail(e.what());
    }
    c->statement_timeout_ms = statement_timeout_ms;
  }
  return c;
}

Rows pg_exec(PgConnection& c, std::string_view sql, std::span<const Param> params,
             PgClock::time_point deadline) {
  const PgClock::time_point start = PgClock::now();
  if (c.statement_timeout_ms > 0) {
    deadline = std::min(deadline, start + milliseconds(c.statement_timeout_ms) + kStallGrace);
  }
  if (params.empty() && sql.find(';') != std::string_view::npos) {
    return run_script(c, sql, start, deadline);
  }
  // Text parameters must end in NUL: every value is copied, one after another, into one
  // buffer reserved up front (so the pointers into it stay valid): one allocation, not one
  // string per parameter. NULL is a null pointer. PostgreSQL's text cannot hold a NUL, so a text
  // parameter holding one is refused here, before anything is sent, rather than cut short.
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto* t = std::get_if<std::string_view>(&params[i]);
    const auto* b = std::get_if<Bytes>(&params[i]);
    if (t != nullptr && t->find('\0') != std::string_view::npos) {
      throw Error(ErrorCode::invalid_argument,
                  "parameter $" + std::to_string(i + 1) +
                      " is text holding a NUL byte, which PostgreSQL cannot store");
    }
    bytes += (t ? t->size() : b ? b->data.size() : 20) + 1;  // an int64: at most 20 digits
  }
  const std::string& name = prepared(c, sql, start, deadline);
  std::string buffer;
  buffer.reserve(bytes);
  std::vector<const char*> values(params.size());
  std::vector<int> lengths(params.size());
  std::vector<int> formats(params.size(), 0);  // text, but bytes in binary format (raw)
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::size_t begin = buffer.size();
    if (const auto* v = std::get_if<std::int64_t>(&params[i])) {
      char digits[24];
      buffer.append(digits, std::to_chars(digits, digits + sizeof digits, *v).ptr);
    } else if (const auto* t = std::get_if<std::string_view>(&params[i])) {
      buffer.append(*t);
    } else if (const auto* b = std::get_if<Bytes>(&params[i])) {
      buffer.append(b->data);
      formats[i] = 1;
    } else {
      continue;  // NULL: values[i] stays nullptr, lengths[i] 0
    }
    values[i] = buffer.data() + begin;
    lengths[i] = static_cast<int>(buffer.size() - begin);
    buffer.push_back('\0');
  }
  send(c,
       PQsendQueryPrepared(c.conn, name.c_str(), static_cast<int>(params.size()), values.data(),
                           lengths.data(), formats.data(), 0),
       sql, start, deadline);
  return collect(c, await(c, sql, start, deadline), sql);
}

bool pg_usable(PgConnection& c) {
  if (c.broken || PQstatus(c.conn) != CONNECTION_OK) return false;
  pollfd readable{PQsocket(c.conn), POLLIN, 0};
  const int ready = ::poll(&readable, 1, 0);
  if (ready < 0) return false;
  if (ready == 0) return true;
  if (PQconsumeInput(c.conn) == 0) return false;  // end of stream: libpq marks it bad
  while (PGnotify* n = PQnotifies(c.conn)) PQfreemem(n);
  return !c.broken && PQstatus(c.conn) == CONNECTION_OK;
}

}  // namespace webhooks::db::detail
