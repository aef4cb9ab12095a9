// Every setting of a webhooks::publisher::Publisher (publisher.h), with its unit and default, in
// one place. webhooks-publisherd's flags (docs/operations.md, "Flags") set these fields one for
// one; an embedder sets them in code:
//
//   webhooks::publisher::Options options;       // the defaults below
//   options.database = "postgres://publisher@db/webhooks";
//   options.admin_token = token;
//   webhooks::publisher::Publisher publisher(options);
//
// Durations are std::chrono::milliseconds; counts are whole numbers. validate() states the domain
// of each field; the Publisher's constructor calls it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "webhooks/clock.h"
#include "webhooks/http_server.h"
#include "webhooks/publisher/ip_network.h"
#include "webhooks/publisher/principals.h"
#include "webhooks/publisher/retry_policy.h"
#include "webhooks/random.h"

namespace webhooks::publisher {

// The tuning of the HTTP server the Publisher is mounted on, as webhooks-publisherd serves it:
// http::ServerTuning's defaults (64 handler threads, 4096 connections, 30 s request timeout),
// with the handlers on fibers on one thread per core (std::thread::hardware_concurrency(), at
// least 1): an ingest waiting for its group commit then holds no thread.
http::ServerTuning default_server_tuning();

struct Options {
  // ------------------------------------------------------------------ storage
  // The database: a SQLite file path (created if absent) or a "postgres://" / "postgresql://"
  // URL. Migrated when the Publisher is built. Default: "./publisher.db".
  std::string database = "./publisher.db";

  // SQLite's PRAGMA synchronous: "NORMAL" (durable across process crashes), "FULL" or "EXTRA"
  // (also across power loss); anything else is refused (db::Options). Ignored for PostgreSQL.
  // Default: "NORMAL".
  std::string sqlite_synchronous = "NORMAL";

  // Connections in the database pool. 0 means max(8, workers + 4): each worker holds one while it
  // claims or records, the HTTP handlers and the idempotency threads share the rest.
  // Default: 0.
  int database_pool_size = 0;

  // PostgreSQL: how long one statement may take before the server cancels it, or the daemon
  // stops waiting for a server that no longer answers (then plus 250 ms, and the connection is
  // dropped); 0: no bound. The call fails, and a request answers 503 storage_unavailable with
  // Retry-After: 1 (db::Options::postgres_statement_timeout_ms). Ignored for SQLite.
  // Default: 5 s.
  std::chrono::milliseconds database_statement_timeout{std::chrono::seconds(5)};

  // PostgreSQL: how long a call waits for a pooled connection (one to come free, or a new one to
  // open); 0: no bound. Past it, as above (db::Options::postgres_pool_wait_ms). Ignored for
  // SQLite. Default: 3 s.
  std::chrono::milliseconds database_pool_wait{std::chrono::seconds(3)};

  // ------------------------------------------------------------------ ingest (POST /v1/events)
  // How long an ingest request's idempotency lease lasts without a heartbeat; another request
  // with the same Idempotency-Key is answered 409 meanwhile. Default: 30 s.
  std::chrono::milliseconds ingest_lease{std::chrono::seconds(30)};

  // How long an ingest's idempotency record is kept (a retry within it gets the same answer).
  // Default: 24 h.
  std::chrono::milliseconds ingest_ttl{std::chrono::hours(24)};

  // Largest request body accepted by every route (bytes); larger ones answer 413
  // payload_too_large. Default: 1 MiB (1048576).
  std::size_t body_limit = http::kDefaultBodyLimit;

  // ------------------------------------------------------------------ admin API
  // Bearer token of every route but /healthz and /metrics, named "admin". Empty (and no
  // `tokens`): those routes all answer 401. Default: empty.
  std::string admin_token;
  // Named tokens besides admin_token: admins (everything) and viewers (GET and HEAD only, the
  // console without actions); the daemon's --admin-token NAME:TOKEN and --viewer-token
  // NAME:TOKEN (principals.h). Names and tokens unique. Default: none.
  std::vector<Principal> tokens;
  // A TLS proxy is in front of the daemon (the daemon's --behind-tls-proxy): the console's cookie
  // is marked Secure and its sign-in expects an https:// origin (docs/console.md). Default: false.
  bool behind_tls_proxy = false;

  // Allow endpoint URLs, and connections, to loopback, private, link-local and CGNAT addresses
  // (ssrf_guard.h). For tests and demos. Default: false.
  bool allow_private_networks = false;

  // Networks whose addresses endpoint URLs, and connections, may use whatever their class, e.g.
  // the merchants' VPC 10.20.0.0/16 (ip_network.h); other non-public addresses stay refused
  // unless allow_private_networks. The daemon's --allow-network. Default: none.
  std::vector<IpNetwork> allowed_networks;

  // How long a rotated-out signing secret keeps signing; 0: not at all. Default: 24 h.
  std::chrono::milliseconds rotation_grace{std::chrono::hours(24)};

  // Replay refuses events older than this (422 replay_too_old): the receivers' dedup window.
  // Default: 7 days.
  std::chrono::milliseconds replay_max_age{std::chrono::hours(24 * 7)};

  // ------------------------------------------------------------------ delivery
  // Waits between attempts (n entries: n + 1 attempts), the age limit of a task and the jitter
  // (retry_policy.h). Default: RetryPolicy(): 5s,5m,30m,2h,5h,10h,10h, 3 days, +-20 %.
  RetryPolicy retry_policy;

  // 4xx answers that make a task dead at once instead of retried (not 408, 425, 429: always
  // retried; not 410: always disables the endpoint). Default: none.
  std::vector<int> permanent_statuses;

  // An endpoint failing continuously this long is disabled; 0: never. Default: 5 days.
  std::chrono::milliseconds disable_after{std::chrono::hours(24 * 5)};

  // Delivery worker threads started by start(); each claims, sends and records its own batches
  // with its own HTTP client and connection cache. Default: 4.
  int workers = 4;

  // Concurrent HTTP requests per worker. Default: 64.
  int max_in_flight = 64;

  // Concurrent requests, hence open connections, to one endpoint, all workers and daemons on the
  // database together: each worker gets max_endpoint_connections / workers, at least 1
  // (endpoint_connections_per_worker). It is also each endpoint's share of the delivery slots:
  // a hanging endpoint holds no more (docs/publisher-delivery.md, "Isolation"). Default: 32.
  int max_endpoint_connections = 32;

  // Attempts each worker keeps in flight (its delivery slots); it claims more as they finish.
  // Default: 32.
  int batch_size = 32;

  // PEM file of the certificate authorities https:// endpoints are verified against; empty: the
  // system's store. Default: empty.
  std::string ca_file;

  // Time to connect (TCP and TLS) to an endpoint. Default: 5 s.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};

  // Time for a whole delivery attempt, connect included. Default: 15 s.
  std::chrono::milliseconds timeout{std::chrono::seconds(15)};

  // How long a claim holds its tasks; after a crash they are taken over this much later. Must
  // exceed timeout times batch_rounds(). Default: 2 min.
  std::chrono::milliseconds delivery_lease{std::chrono::minutes(2)};

  // How often idle workers look for due tasks (an ingest, a replay or an enable wakes them at
  // once). Default: 250 ms.
  std::chrono::milliseconds poll_interval{std::chrono::milliseconds(250)};

  // Prefix of every lease owner: names this Publisher in the database. Empty: a new UUIDv7.
  // Default: empty.
  std::string instance_id;

  // ------------------------------------------------------------------ maintenance
  // How often the ingest's idempotency records are swept (lapsed leases: failed) and purged
  // (past their TTL), once start() was called. Default: 10 s.
  std::chrono::milliseconds maintenance_interval{std::chrono::seconds(10)};

  // Events older than this whose tasks are all finished (succeeded or dead) are deleted with
  // their tasks and attempts (retention.h), a pass every maintenance_interval; 0: kept forever.
  // Default: 30 days.
  std::chrono::milliseconds retention{std::chrono::hours(24 * 30)};
  // Events deleted per transaction, and the real time between two of a pass. Defaults: 500,
  // 100 ms.
  int retention_batch = 500;
  std::chrono::milliseconds retention_pause{std::chrono::milliseconds(100)};

  // The console's overview (overview_snapshot.h): once computing it takes longer than
  // overview_budget (real time), pages read a snapshot taken every overview_refresh instead.
  // Defaults: 20 ms, 5 s.
  std::chrono::milliseconds overview_budget{20};
  std::chrono::milliseconds overview_refresh{std::chrono::seconds(5)};

  // ------------------------------------------------------------------ operational webhook
  // Non-empty: endpoint.failing and endpoint.disabled events (ops_events.h) are delivered to this
  // URL, signed with ops_secret ("whsec_…", required with it), like any delivery. Default: empty.
  std::string ops_url;
  std::string ops_secret;

  // ------------------------------------------------------------------ serving
  // Not read by the Publisher (mount() takes the caller's server): how webhooks-publisherd binds
  // and tunes the server it mounts the Publisher on.
  // HOST:PORT or [IPv6]:PORT; port 0 picks a free one. Default: "127.0.0.1:8780".
  std::string listen = "127.0.0.1:8780";
  // Default: default_server_tuning().
  http::ServerTuning server = default_server_tuning();

  // ------------------------------------------------------------------ time and randomness
  // Every time the Publisher stores or compares (leases, due times, ages, signatures' timestamps)
  // comes from `clock`; nullptr means system_clock(). Tests pass a FakeClock. Must outlive the
  // Publisher. Default: nullptr.
  const Clock* clock = nullptr;

  // The retry jitter's source; nullptr means a SecureRandom owned by the Publisher. Must be
  // thread-safe and outlive the Publisher. Default: nullptr.
  RandomSource* random = nullptr;
};

// Throws Error(invalid_argument) naming the first field outside its domain: workers 1..256;
// max_in_flight, batch_size 1..10000; max_endpoint_connections 1..100000; database_pool_size
// >= 0; body_limit >= 1; connect_timeout, timeout, delivery_lease, poll_interval,
// maintenance_interval, ingest_lease, ingest_ttl, replay_max_age and overview_refresh > 0;
// rotation_grace, disable_after, retention, retention_pause and overview_budget >= 0;
// retention_batch 1..100000; ops_secret a valid secret when ops_url is set, and ops_url an http(s)
// URL; every permanent status one classify_attempt makes permanent; and delivery_lease > timeout *
// batch_rounds().
void validate(const Options& options);

// Requests to one endpoint per worker: max_endpoint_connections / workers, at least 1.
int endpoint_connections_per_worker(const Options& options);

// The rounds the slowest batch may need (all of it to one endpoint):
// ceil(batch_size / min(max_in_flight, endpoint_connections_per_worker())).
int batch_rounds(const Options& options);

}  // namespace webhooks::publisher
