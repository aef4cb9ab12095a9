// orders-api's configuration and serving HTTP (`reconcile` is resolve.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace webhooks::orders {

struct Config {
  std::string listen = "127.0.0.1:8781";
  std::string db = "./orders.db";
  // PostgreSQL bounds (milliseconds, 0: none; db::Options): one statement, and the wait for a
  // pooled connection. Past either a request answers 503 storage_unavailable with Retry-After.
  int db_statement_timeout_ms = 5'000;
  int db_pool_wait_ms = 3'000;
  double lease_seconds = 30;          // idempotency lease (renewed while an operation runs)
  double ttl_seconds = 24 * 3600;     // idempotency record lifetime
  std::vector<std::string> api_keys;  // "KEY:MERCHANT_ID"
  // A TLS proxy is in front: the console's cookie is Secure, its sign-in expects an https://
  // origin.
  bool behind_tls_proxy = false;
  std::string partner_url = "http://127.0.0.1:8782";
  std::int64_t partner_timeout_ms = 5000;
  int partner_attempts = 3;
  // The outbox relay: when publisher_url is set, every outbox row is posted to the publisher's
  // POST /v1/events (Idempotency-Key = the row's id), polling every relay_poll_ms when idle.
  std::string publisher_url;
  std::string publisher_token;
  std::int64_t relay_poll_ms = 200;
  double outbox_retention_seconds = 7 * 24 * 3600;  // sent outbox rows kept this long; 0: forever
  std::string log_level = "info";
  int threads = 64;  // HTTP worker threads when fiber_threads is 0
  // Handlers on fibers on this many threads (0: a pool of `threads`); the number of cores.
  int fiber_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int max_connections = 4096;                 // open client connections (webhooks::http::Server)
  int max_buffered_bytes = 64 * 1024 * 1024;  // request bytes buffered, all connections together
  std::int64_t request_timeout_ms = 30'000;   // a request's head and body, from its first byte
  // Test hooks (docs/orders-api.md, "Test hooks").
  std::int64_t operation_delay_ms = 0;
  bool crash_after_partner_commit = false;
  bool break_transaction_once = false;
};

// Serves until SIGTERM or SIGINT. Returns the exit code. Throws webhooks::Error on bad
// configuration or an unreachable database.
int serve(const Config& config);

}  // namespace webhooks::orders
