// The webhook receiver: verifies a Standard Webhooks delivery, deduplicates it on its signed
// `webhook-id` through the idempotency core, runs the merchant's handler at most once per event,
// and returns the answer docs/receiver.md's table gives:
//
//   webhooks::receiver::Config config;
//   config.secrets = {"whsec_..."};
//   config.consumer = "billing";
//   config.store = "./merchant.db";                 // or "postgresql://..."
//   webhooks::receiver::Receiver receiver(config);
//   auto answer = receiver.handle(headers, raw_body, [](const webhooks::receiver::Event& e) {
//     ship(e.payload());
//     return webhooks::receiver::Reply{};              // 200, stored, replayed to duplicates
//   });
//
// Thread-safe: one Receiver serves every thread of a process.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/providers/provider.h"
#include "webhooks/verifier.h"

namespace webhooks::receiver {

struct Config {
  // Whose webhooks are received: `standard` (Standard Webhooks v1, signed webhook-id as the dedup
  // key), or `stripe`, `github`, `shopify`, `slack`, each verified as its provider documents and
  // deduplicated on the provider's event id (webhooks/providers/*.h; docs/receiver.md, "Other
  // providers"). Only the verification and the dedup key differ; the rest is the same.
  providers::Provider provider = providers::Provider::standard;
  // Symmetric secrets, all accepted at once (rotation). Standard: "whsec_..." or bare base64,
  // each parsed when the Receiver is built, a bad one throws Error(invalid_secret). Other
  // providers: the raw secret strings as the provider shows them (used byte for byte as the HMAC
  // key); an empty one throws Error(invalid_secret).
  std::vector<std::string> secrets;
  // Optional Ed25519 verifying keys ("whpk_...") for "v1a" signatures. Error(invalid_key) if bad;
  // Error(invalid_argument) with another provider than standard.
  std::vector<std::string> public_keys;
  // Largest accepted |now - webhook-timestamp|, both directions (also Stripe's t= and Slack's
  // X-Slack-Request-Timestamp; GitHub and Shopify sign no timestamp).
  std::chrono::seconds tolerance{300};
  // Bodies larger than this are answered 413 before anything else is looked at.
  std::size_t max_body_bytes = 1024 * 1024;
  // The dedup scope: two consumers of one database see each event once each.
  std::string consumer = "default";
  // Where the dedup records live: a SQLite file path or a postgres:// URL. Ignored when the
  // Receiver is given an open database.
  std::string store = "./webhooks.db";
  db::Options database;
  // A handler's lease, where a durable claim is taken (below); renewed every lease/3 while it
  // runs, so only a crashed handler is taken over, one lease after its last heartbeat. The
  // delivery meanwhile gets 409 + Retry-After.
  std::chrono::milliseconds lease = std::chrono::seconds(30);
  // How long a dedup record is kept: longer than the publisher's retry window (3 days).
  std::chrono::milliseconds ttl = std::chrono::hours(24 * 7);
  // A handler that returns after this much (real, steady) time is treated as failed: 500, the
  // record is failed, its transaction (transactional mode) rolled back. 0: no limit.
  std::chrono::milliseconds handler_timeout = std::chrono::seconds(30);
  // Non-transactional mode: how a handler is kept from running twice at once (docs/receiver.md,
  // "Claims"). `durable`: an `in_progress` record with a lease is committed before the handler
  // runs (two commits per new event), so another process sharing the database sees it.
  // `in_process`: the claim is held in memory only and the record is written once, after the
  // handler (one commit), which is safe only when no other process runs handlers on the same
  // database. `automatic` (default): durable on PostgreSQL; on SQLite in_process while this
  // process holds an exclusive lock (flock) on the database file (its Receivers share one claim
  // set), durable (a shared lock) when another process's Receiver already uses it durably; when
  // another process holds it in_process, non-transactional deliveries are answered 503 (see
  // durable_claims()). Resolved at the first non-transactional delivery. Transactional mode takes
  // no claim of either kind (the record's unique key settles a race inside the handler's own
  // transaction), but on a SQLite file (automatic or durable) it takes the shared lock at its first
  // delivery, so that no other process handles the file's events under in-process claims beside
  // it: while another process holds the file alone, its deliveries are answered 503 too.
  enum class Claims { automatic, durable, in_process };
  Claims claims = Claims::automatic;
  // PostgreSQL, transactional mode: how long a delivery waits for another process's uncommitted
  // transaction of the same event before it is answered 409 event_in_progress (lock_timeout).
  std::chrono::milliseconds lock_timeout = std::chrono::seconds(1);
  // Answers of events this process handled (or found handled) kept in memory, so a duplicate is
  // answered without a database read; one with the handled delivery's exact body also without
  // scanning the body again, and is logged with that delivery's type. idempotency::ReplayCache:
  // at most this many events, about 200 bytes each plus the answer's body, answers of at most
  // 4 KiB, each until its record expires. 0: none.
  std::size_t replay_cache_entries = 65'536;
  // Sweeper and purge of the dedup records (idempotency::Maintenance) every this much real
  // time. 0: not run by the Receiver.
  std::chrono::milliseconds maintenance_interval = std::chrono::seconds(10);
  // Business time: leases, TTLs and the timestamp window. nullptr: the system clock. Must
  // outlive the Receiver.
  const Clock* clock = nullptr;
};

// Request headers as received. Names compare case-insensitively; a name may repeat.
// A Headers either holds its own entries (the list constructor, add()) or views a container of
// entries held elsewhere without copying them (Headers::view, e.g. over httplib::Request::headers,
// which is what receiver::headers_of does for every HTTP request). Entries added to a view come
// after the viewed ones.
class Headers {
 public:
  Headers() = default;
  Headers(std::initializer_list<std::pair<std::string, std::string>> entries) : entries_(entries) {}
  // A view of `entries`, any range of (name, value) pairs whose members convert to
  // std::string_view (httplib::Headers, std::vector<std::pair<std::string, std::string>>, ...).
  // Nothing is copied: `entries` must outlive the Headers (and its copies) and stay unchanged
  // while they are used.
  template <typename Range>
  static Headers view(const Range& entries);
  template <typename Range>
  static Headers view(const Range&& entries) = delete;  // a temporary would dangle
  void add(std::string name, std::string value) {
    entries_.emplace_back(std::move(name), std::move(value));
  }
  // The first value of `name`, or std::nullopt. A view into the entries, valid as long as they.
  std::optional<std::string_view> get(std::string_view name) const;
  // Every value of `name`, joined with single spaces (repeated `webhook-signature` lines are one
  // list of entries), or std::nullopt when absent.
  std::optional<std::string> joined(std::string_view name) const;
  // Whether two header names are the same name: equal but for ASCII letter case (RFC 9110,
  // section 5.1).
  static bool same_name(std::string_view a, std::string_view b);

 private:
  // Calls `on_value(context, value)` for each value of `name` in the viewed range, in its order,
  // until it returns false.
  using OnValue = bool (*)(void* context, std::string_view value);
  using Visit = void (*)(const void* range, std::string_view name, void* context, OnValue on_value);
  // Calls `f(value)` for each value of `name` (viewed ones first) until it returns false.
  template <typename F>
  void each_value(std::string_view name, F&& f) const;

  std::vector<std::pair<std::string, std::string>> entries_;
  const void* viewed_ = nullptr;
  Visit visit_ = nullptr;
};

template <typename Range>
Headers Headers::view(const Range& entries) {
  Headers headers;
  headers.viewed_ = &entries;
  headers.visit_ = [](const void* range, std::string_view name, void* context, OnValue on_value) {
    for (const auto& [n, v] : *static_cast<const Range*>(range)) {
      if (same_name(n, name) && !on_value(context, v)) return;
    }
  };
  return headers;
}

// A request's Standard Webhooks headers as the receiver (and `webhooks verify`) reads them
// (docs/receiver.md, "Answers", step 2): under the webhook-* names, or the Svix service's svix-*
// names (choose_signed_header_names, verifier.h: a request with some of each is malformed_header);
// the signature's repeated lines joined with single spaces into `signature` (one list of
// entries), the first line of the id and the timestamp. Returns ok with `out` set (views into
// `headers` and `signature`, valid while both are), or the refusal.
VerifyResult read_signed_headers(const Headers& headers, SignedHeaders& out,
                                 std::optional<std::string>& signature);

// A verified delivery, as the handler sees it. Views into the request; valid during the call.
struct Event {
  std::string_view id;           // webhook-id (or svix-id): the dedup key (other providers: their
                                 // event id)
  std::string_view type;         // the body's "type", else the type header (webhook-event-type,
                                 // X-GitHub-Event, X-Shopify-Topic or shopify-topic), else ""
  std::string_view delivery_id;  // webhook-delivery-id (diagnostics only; "" when absent)
  std::int64_t timestamp = 0;    // webhook-timestamp (svix-timestamp), Unix seconds (GitHub,
                                 // Shopify: 0)
  std::string_view body;         // the raw body
  int attempt = 1;               // 1 on the first run, 2 after one failed run, ...

  // The parsed body: a JSON object nested at most 128 deep (json_parse.h); numbers beyond 64 bits
  // are doubles here, exact in `body`. Parsed on the first call, so a handler that reads only
  // `body` and `type` builds no tree; the receiver checked the body before the handler ran, so
  // this throws nothing but std::bad_alloc. Valid as long as the Event; not for concurrent first
  // calls from several threads.
  const nlohmann::json& payload() const;

 private:
  mutable std::optional<nlohmann::json> payload_;
};

// The handler's verdict. 2xx: handled (stored, replayed to duplicates). A 4xx other than 408,
// 409, 425 and 429: rejected for good (stored, replayed). Anything else: failed (500, run again on
// the next delivery). An empty body is replaced by a small JSON one.
struct Reply {
  int status = 200;
  std::string body;
};

using Handler = std::function<Reply(const Event&)>;
// Transactional mode: `tx` is the transaction that inserts the event's dedup record, already
// completed with the answer, so the handler's writes and the record commit together, or (on
// failure) neither does. Concurrent new events share one commit (idempotency::GroupCommit), each
// in its own savepoint: a handler that fails rolls back only its own writes. The handler may run
// on another delivery's thread; it must not open a transaction of its own on this database.
using TransactionalHandler = std::function<Reply(const Event&, db::Transaction&)>;

// The HTTP answer: status, headers (Retry-After, Idempotent-Replayed), JSON body.
using Answer = idempotency::Response;

class Receiver {
 public:
  // Opens config.store and migrates the idempotency core's component into it (its only table,
  // idempotency_records; webhooks/idempotency/schema.h). Throws Error(invalid_secret / invalid_key
  // / invalid_argument) for a bad configuration, Error(storage) if the store cannot be opened.
  explicit Receiver(Config config);
  // Uses `database` (its idempotency component migrated here if needed; no other table is made),
  // e.g. the merchant's own, for transactional mode.
  Receiver(Config config, std::shared_ptr<db::Database> database);
  ~Receiver();
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;

  // The answer for one delivery; see the table in docs/receiver.md. Never throws: a database
  // failure is answered 503 storage_unavailable with Retry-After: 1.
  Answer handle(const Headers& headers, std::string_view raw_body, const Handler& handler);
  Answer handle(const Headers& headers, std::string_view raw_body,
                const TransactionalHandler& handler);

  db::Database& database();
  std::shared_ptr<db::Database> shared_database() const;
  idempotency::Store& store();
  const Config& config() const;
  // Whether non-transactional deliveries take a durable claim (Config::claims, resolved at the
  // first call of this or of the non-transactional handle()). Throws Error(invalid_argument) when
  // another process holds the SQLite file with in-process claims (handle() answers 503
  // storage_unavailable then), Error(storage) when the file cannot be opened.
  bool durable_claims();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace webhooks::receiver
