// orders-api: the platform's orders and payouts API. Every POST is guarded by the idempotency
// core (scope = the merchant of the bearer API key). `orders-api reconcile` matches payouts to
// the payout partner's transfers. docs/orders-api.md. --api-key and --publisher-token may also come
// from --api-key-file / --publisher-token-file or WEBHOOKS_API_KEY / WEBHOOKS_PUBLISHER_TOKEN.
#include <CLI/CLI.hpp>
#include <iostream>

#include "payouts/resolve.h"
#include "server.h"
#include "webhooks/app/deprecated_flags.h"
#include "webhooks/app/flags.h"
#include "webhooks/app/secret_flags.h"
#include "webhooks/app/server.h"
#include "webhooks/error.h"

namespace {

using webhooks::app::add_deprecated_alias;
using webhooks::app::add_duration;
using webhooks::app::count;
using webhooks::app::duration;
using webhooks::app::DurationUnit;
using webhooks::app::OldValue;
using webhooks::app::StoreAs;
using webhooks::app::Zero;

// A PostgreSQL bound (--db-statement-timeout, --db-pool-wait): at most 24h, kept in an int.
CLI::Validator at_most_a_day() {
  return webhooks::app::accepted_by("", [](const std::string& text) {
    if (webhooks::parse_duration(text) > std::chrono::hours(24)) {
      throw webhooks::Error(webhooks::ErrorCode::invalid_argument, "must be at most 24h");
    }
  });
}
using webhooks::orders::Config;

// --listen, --db, --db-statement-timeout, --db-pool-wait, --lease, --ttl, --api-key: where
// the API listens, its store (and how long it waits for it) and idempotency.
void add_api_options(CLI::App& app, Config& config) {
  app.add_option("--listen", config.listen, "HOST:PORT to listen on; port 0 picks a free port")
      ->check(webhooks::app::listen_address())
      ->capture_default_str();
  app.add_option("--db", config.db, "SQLite path or postgres:// URL")->capture_default_str();
  CLI::Option* statement =
      add_duration(app, "--db-statement-timeout", config.db_statement_timeout_ms,
                   StoreAs::milliseconds,
                   "PostgreSQL: time one statement may take (the server's statement_timeout; "
                   "orders-api also gives up on a server that stopped answering 250ms after it); "
                   "the request then answers 503 storage_unavailable with Retry-After; 0s: no "
                   "bound, at most 24h",
                   Zero::allowed)
          ->check(at_most_a_day());
  add_deprecated_alias(app, statement, "--db-statement-timeout-ms", OldValue::milliseconds,
                       Zero::allowed);
  CLI::Option* pool_wait =
      add_duration(app, "--db-pool-wait", config.db_pool_wait_ms, StoreAs::milliseconds,
                   "PostgreSQL: time a request waits for a pooled database connection (one to "
                   "come free or a new one to open); then 503 storage_unavailable with "
                   "Retry-After; 0s: no bound, at most 24h",
                   Zero::allowed)
          ->check(at_most_a_day());
  add_deprecated_alias(app, pool_wait, "--db-pool-wait-ms", OldValue::milliseconds, Zero::allowed);
  add_duration(app, "--lease", config.lease_seconds, StoreAs::seconds,
               "idempotency lease, renewed while an operation runs")
      ->transform(webhooks::app::deprecated_bare_number("--lease", DurationUnit::seconds));
  add_duration(app, "--ttl", config.ttl_seconds, StoreAs::seconds,
               "idempotency record lifetime; later the key is a new request")
      ->transform(webhooks::app::deprecated_bare_number("--ttl", DurationUnit::seconds));
  webhooks::app::add_secret_option(
      app,
      {"--api-key", "WEBHOOKS_API_KEY",
       "KEY:MERCHANT_ID, repeatable: bearer API key and the merchant it acts for",
       webhooks::app::api_key()},
      config.api_keys);
  app.add_flag("--behind-tls-proxy", config.behind_tls_proxy,
               "a proxy terminating TLS is in front: the console's cookie is marked Secure and "
               "its sign-in expects an https:// origin")
      ->envname("WEBHOOKS_BEHIND_TLS_PROXY");
}

// --partner-url, --partner-timeout, --partner-attempts: calls to the payout partner.
void add_partner_options(CLI::App& app, Config& config) {
  app.add_option("--partner-url", config.partner_url, "the payout partner, http://HOST:PORT")
      ->check(webhooks::app::server_url(false))
      ->capture_default_str();
  CLI::Option* timeout =
      add_duration(app, "--partner-timeout", config.partner_timeout_ms, StoreAs::milliseconds,
                   "connect/read/write timeout of one call to the partner");
  add_deprecated_alias(app, timeout, "--partner-timeout-ms", OldValue::milliseconds);
  app.add_option("--partner-attempts", config.partner_attempts,
                 "tries per transfer (same X-Idempotency-Key) on timeouts, connection errors, 5xx")
      ->check(count(1))
      ->capture_default_str();
}

// --publisher-url, --publisher-token, --relay-poll, --outbox-retention: the outbox relay.
void add_relay_options(CLI::App& app, Config& config) {
  app.add_option("--publisher-url", config.publisher_url,
                 "the publisher, http://HOST:PORT: relay every outbox event to its POST /v1/events "
                 "(none: events stay in the outbox table)")
      ->check(webhooks::app::server_url(true));
  webhooks::app::add_secret_option(
      app,
      {"--publisher-token", "WEBHOOKS_PUBLISHER_TOKEN",
       "bearer token for --publisher-url (the publisher's --admin-token)",
       webhooks::app::bearer_token()},
      config.publisher_token);
  CLI::Option* poll = add_duration(app, "--relay-poll", config.relay_poll_ms, StoreAs::milliseconds,
                                   "how often the idle outbox relay looks for new events");
  add_deprecated_alias(app, poll, "--relay-poll-ms", OldValue::milliseconds);
  add_duration(app, "--outbox-retention", config.outbox_retention_seconds, StoreAs::seconds,
               "how long a relayed (sent) outbox row is kept before the relay deletes it; 0s: "
               "forever",
               Zero::allowed)
      ->transform(webhooks::app::deprecated_bare_number("--outbox-retention", DurationUnit::seconds,
                                                        Zero::allowed));
}

// --threads, --fiber-threads, --max-connections, --request-timeout, --log-level.
void add_server_options(CLI::App& app, Config& config) {
  app.add_option("--threads", config.threads,
                 "HTTP worker threads when --fiber-threads is 0 (handlers only: idle and slow "
                 "connections hold none)")
      ->check(count(1, 4096))
      ->capture_default_str();
  app.add_option(
         "--fiber-threads", config.fiber_threads,
         "event-loop threads, each reading its connections and running their handlers on fibers "
         "(default: the number of cores), 0 to 1024; 0: one loop and a pool of --threads "
         "threads, one request each")
      ->check(count(0, 1024))
      ->capture_default_str();
  app.add_option("--max-connections", config.max_connections,
                 "open client connections at most; beyond it the one waiting the longest without a "
                 "whole request is closed")
      ->check(count(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--max-buffered-bytes", config.max_buffered_bytes,
                 "request bytes every connection together may hold buffered (heads, bodies being "
                 "received); a "
                 "request that would pass it is answered 503 server_busy with Retry-After")
      ->check(count(65536, 2147483647))
      ->capture_default_str();
  CLI::Option* request_timeout =
      add_duration(app, "--request-timeout", config.request_timeout_ms, StoreAs::milliseconds,
                   "time for a request's head and body to arrive, from its first byte; 408 after");
  add_deprecated_alias(app, request_timeout, "--request-timeout-ms", OldValue::milliseconds);
  app.add_option("--log-level", config.log_level, "debug, info, warn or error")
      ->transform(webhooks::app::log_levels())
      ->capture_default_str();
}

// The test hooks: --operation-delay, --crash-after-partner-commit, --break-transaction-once.
void add_test_hooks(CLI::App& app, Config& config) {
  CLI::Option* delay = add_duration(
      app, "--operation-delay", config.operation_delay_ms, StoreAs::milliseconds,
      "test hook: sleep inside each guarded operation, before its transaction", Zero::allowed);
  add_deprecated_alias(app, delay, "--operation-delay-ms", OldValue::milliseconds, Zero::allowed);
  app.add_flag("--crash-after-partner-commit", config.crash_after_partner_commit,
               "test hook: SIGKILL this process right after the partner accepts a transfer");
  app.add_flag("--break-transaction-once", config.break_transaction_once,
               "test hook: break the next POST /orders transaction after its writes "
               "(PostgreSQL: terminate its own backend)");
}

CLI::App* add_reconcile(CLI::App& app, webhooks::orders::ReconcileOptions& args) {
  CLI::App* reconcile = app.add_subcommand(
      "reconcile",
      "match payouts to the partner's transfers; exit 0 when clean, 1 on findings left that need "
      "a human, 2 when the partner or the database cannot be reached");
  reconcile->add_option("--db", args.db, "SQLite path or postgres:// URL")->capture_default_str();
  reconcile->add_option("--partner-url", args.partner_url, "the payout partner, http://HOST:PORT")
      ->check(webhooks::app::server_url(false))
      ->capture_default_str();
  CLI::Option* timeout = add_duration(*reconcile, "--partner-timeout", args.timeout_ms,
                                      StoreAs::milliseconds, "timeout of each partner call");
  add_deprecated_alias(*reconcile, timeout, "--partner-timeout-ms", OldValue::milliseconds);
  reconcile->add_flag(
      "--resolve", args.resolve,
      "act on the findings: reverse each duplicate transfer but the payout's first "
      "(key kxr-<transfer_id>), re-submit each missing one under its downstream "
      "key; each step is recorded in `reconciliations` before the partner is called");
  reconcile
      ->add_flag("--dry-run", args.dry_run,
                 "with --resolve: print the plan (and steps left by an earlier run), write and "
                 "call nothing")
      ->needs("--resolve");
  reconcile->add_flag("--json", args.json,
                      "print one JSON document instead of the table and lines");
  reconcile
      ->add_option("--crash-after-partner-calls", args.crash_after_partner_calls,
                   "test hook: SIGKILL this process after N calls to the partner in --resolve, "
                   "before recording the last one's outcome (0: right after the plan is committed)")
      ->check(count(0));
  return reconcile;
}

}  // namespace

int main(int argc, char** argv) {
  webhooks::app::tune_malloc();
  webhooks::app::block_stop_signals();
  Config config;
  CLI::App app{"orders-api: orders and payouts behind the idempotency core"};
  add_api_options(app, config);
  add_partner_options(app, config);
  add_relay_options(app, config);
  add_server_options(app, config);
  add_test_hooks(app, config);
  webhooks::orders::ReconcileOptions reconcile_args;
  const CLI::App* reconcile = add_reconcile(app, reconcile_args);
  if (const auto exit_code = webhooks::app::parse_command_line(app, argc, argv)) {
    return *exit_code;
  }
  try {
    if (*reconcile) {
      return webhooks::orders::reconcile_command(reconcile_args, std::cout);
    }
    return webhooks::orders::serve(config);
  } catch (const std::exception& e) {
    std::cerr << "orders-api: " << e.what() << std::endl;
    return 2;
  }
}
