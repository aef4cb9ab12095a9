#include "merchant.h"

#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace merchant {

using webhooks::db::Transaction;
using webhooks::receiver::Event;
using webhooks::receiver::Reply;

void create_tables(webhooks::db::Database& db) {
  db.transact([](Transaction& tx) {
    tx.exec(
        "CREATE TABLE IF NOT EXISTS merchant_events (event_id TEXT PRIMARY KEY, "
        "type TEXT NOT NULL, calls BIGINT NOT NULL, effect TEXT)");
    // A database of an earlier version kept the calls and the effects in two tables.
    const std::string_view old_tables =
        tx.engine() == webhooks::db::Engine::sqlite
            ? "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'merchant_calls'"
            : "SELECT COUNT(*) FROM information_schema.tables "
              "WHERE table_schema = current_schema() AND table_name = 'merchant_calls'";
    if (tx.exec(old_tables).integer(0, 0) == 0) return;
    tx.exec(
        "INSERT INTO merchant_events (event_id, type, calls, effect) "
        "SELECT c.event_id, c.type, c.calls, e.body FROM merchant_calls c "
        "LEFT JOIN merchant_effects e ON e.event_id = c.event_id ON CONFLICT (event_id) DO "
        "NOTHING");
    tx.exec("DROP TABLE merchant_calls");
    tx.exec("DROP TABLE IF EXISTS merchant_effects");
  });
}

bool fails_first_attempt(std::string_view event_id, int percent) {
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (char c : event_id) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return static_cast<int>(hash % 100) < percent;
}

Reply Merchant::handle(const Event& event, Transaction& tx) {
  const bool ours = event.type.starts_with("order.") || event.type.starts_with("payout.");
  // Keyed by the event id, so that a delivery after the dedup record expired (--ttl), which runs
  // the handler again as a new event, still leaves one effect: the merchant's own key.
  tx.exec(
      "INSERT INTO merchant_events (event_id, type, calls, effect) VALUES ($1, $2, $3, $4) "
      "ON CONFLICT (event_id) DO UPDATE SET type = excluded.type, calls = excluded.calls, "
      "effect = COALESCE(merchant_events.effect, excluded.effect)",
      {event.id, event.type, std::int64_t{event.attempt},
       ours ? webhooks::db::Param(event.body) : webhooks::db::Param(nullptr)});
  if (event.attempt == 1 && faults_.crash_on_event > 0 && ++new_events_ == faults_.crash_on_event) {
    ::kill(::getpid(), SIGKILL);  // inside the handler: the effect row is not committed
  }
  if (event.attempt == 1 && fails_first_attempt(event.id, faults_.fail_first_attempts_percent)) {
    throw std::runtime_error("injected failure (--fail-first-attempts)");
  }
  return Reply{200, ours ? "{\"received\":true}" : "{\"received\":true,\"ignored\":true}"};
}

std::string Merchant::handled_json() {
  const auto rows = db_.exec(
      "SELECT event_id, type, calls, CASE WHEN effect IS NULL THEN 0 ELSE 1 END "
      "FROM merchant_events ORDER BY event_id");
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    events.push_back({{"event_id", rows.text(i, 0)},
                      {"type", rows.text(i, 1)},
                      {"calls", rows.integer(i, 2)},
                      {"effects", rows.integer(i, 3)}});
  }
  return nlohmann::json{{"events", events}}.dump(  // types may come from a header
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace merchant
