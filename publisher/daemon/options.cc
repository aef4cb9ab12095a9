#include "options.h"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "webhooks/app/flags.h"
#include "webhooks/app/secret_flags.h"
#include "webhooks/error.h"
#include "webhooks/publisher/duration.h"
#include "webhooks/publisher/retry_policy.h"

namespace webhooks::publisherd {
namespace {

using app::Zero;
using publisher::parse_duration;

// A flag such as --timeout 15s: a duration in the grammar of duration.h (at most 365d), greater
// than 0 unless zero is allowed.
CLI::Validator duration_text(Zero zero = Zero::refused) {
  return app::accepted_by("DURATION", [zero](const std::string& text) {
    if (parse_duration(text).count() == 0 && zero == Zero::refused) {
      throw Error(ErrorCode::invalid_argument, "must be greater than 0, e.g. \"5s\"");
    }
  });
}

// --permanent-status, after app::count(400, 499): a status that classify_attempt would make
// permanent. It ignores the list for 408, 425 and 429 (always retried) and 410 (always disables
// the endpoint), so listing them would silently change nothing; they are refused, saying why.
CLI::Validator permanent_status() {
  return app::accepted_by("STATUS", [](const std::string& text) {
    const int status = std::stoi(text);
    const publisher::OutcomeRules rules{{status}};
    switch (publisher::classify_attempt(status, rules)) {
      case publisher::AttemptOutcome::permanent:
        return;
      case publisher::AttemptOutcome::gone:
        throw Error(ErrorCode::invalid_argument,
                    text + " cannot be permanent: a 410 always disables the endpoint (its tasks "
                           "wait until it is enabled again)");
      default:
        throw Error(ErrorCode::invalid_argument,
                    text + " cannot be permanent: 408, 425 and 429 mean \"try later\" and are "
                           "always retried");
    }
  });
}

// The checks that need several flags, after parsing: the retry schedule as a whole (with
// --max-age), and the delivery lease: a batch larger than the in-flight window is sent in rounds
// (all of it may go to one endpoint), and the lease must outlast them all.
void check_together(const Options& o) {
  try {
    publisher::RetryPolicy::parse(o.retry_schedule, parse_duration(o.max_age));
  } catch (const Error& e) {
    throw CLI::ValidationError("--retry-schedule", e.what());
  }
  const int window = std::min(o.max_in_flight, endpoint_connections_per_worker(o));
  const int rounds = (o.batch_size + window - 1) / window;
  if (parse_duration(o.delivery_lease) <= parse_duration(o.timeout) * rounds) {
    throw CLI::ValidationError(
        "--delivery-lease",
        o.delivery_lease + " must be longer than --timeout (" + o.timeout + ") times the " +
            std::to_string(rounds) +
            " round(s) a batch may need, ceil(--batch-size / min(--max-in-flight, "
            "--max-endpoint-connections / --workers)), or a slow batch could be taken over "
            "while it is being sent");
  }
}

}  // namespace

int endpoint_connections_per_worker(const Options& o) {
  return std::max(1, o.max_endpoint_connections / o.workers);
}

Parsed parse_options(int argc, char** argv) {
  Parsed parsed;
  Options& o = parsed.options;
  CLI::App app{
      "webhooks-publisherd: accepts events, signs them and delivers them to every subscribed "
      "endpoint with retries, keeping every attempt on record.\nEvery flag can also be set by "
      "the environment variable shown, or in a --config file: one `name = value` line per flag, "
      "name without its dashes (TOML or INI syntax: quotes optional, # or ; comments, lists as "
      "[a, b] or a,b, a bare name sets an on/off flag). The command line wins over the file, the "
      "file over the environment; an unknown name is an error."};
  app.set_config("--config", "", "read flags from this file");
  app.config_formatter(app::bounded_config());
  app.allow_config_extras(CLI::config_extras_mode::error);
  app.get_formatter()->column_width(36);
  const auto opt = [&](const char* name, auto& value, const char* env, const char* help) {
    return app.add_option(name, value, help)->envname(env)->capture_default_str();
  };
  opt("--listen", o.listen, "WEBHOOKS_LISTEN", "HOST:PORT to serve on; port 0 picks a free one")
      ->check(app::listen_address());
  opt("--db", o.db, "WEBHOOKS_DB", "SQLite file path or postgres:// URL");
  opt("--lease", o.lease_seconds, "WEBHOOKS_LEASE",
      "seconds an ingest request's idempotency lease lasts without a heartbeat")
      ->check(app::duration(app::DurationUnit::seconds));
  opt("--ttl", o.ttl_seconds, "WEBHOOKS_TTL", "seconds idempotency records are kept")
      ->check(app::duration(app::DurationUnit::seconds));
  app::add_secret_option(app,
                         {"--admin-token", "WEBHOOKS_ADMIN_TOKEN",
                          "bearer token for every route but /healthz and /metrics (required for "
                          "them to answer)",
                          app::bearer_token()},
                         o.admin_token);
  app.add_flag("--allow-private-networks", o.allow_private_networks,
               "deliver to loopback, private, link-local and CGNAT addresses (tests, demos)")
      ->envname("WEBHOOKS_ALLOW_PRIVATE_NETWORKS");
  // Entries come as one value (1s,5m) or, from a --config list ([1s, 5m]), several; they are
  // joined back so that RetryPolicy::parse judges every form alike ([] or 1s,,5m: exit 2).
  // CLI11 would append a second --retry-schedule to the first (1s then 5s: [1s, 5s]), so the
  // callback runs once per occurrence (trigger_on_parse) and a second one is refused. The command
  // line still replaces the file's and the environment's schedule: CLI11 reads those only for
  // flags the command line did not give.
  int schedules_given = 0;
  app.add_option_function<std::vector<std::string>>(
         "--retry-schedule",
         [&o, &schedules_given](const std::vector<std::string>& entries) {
           if (++schedules_given > 1) {
             throw CLI::ValidationError(
                 "--retry-schedule",
                 "given twice; write the whole schedule once, comma-separated, e.g. "
                 "--retry-schedule 5s,5m,30m");
           }
           o.retry_schedule.clear();
           for (std::size_t i = 0; i < entries.size(); ++i) {
             o.retry_schedule += (i ? "," : "") + entries[i];
           }
         },
         "waits between attempts (n entries: n+1 attempts), jittered by +-20%")
      ->envname("WEBHOOKS_RETRY_SCHEDULE")
      ->default_str(o.retry_schedule)
      ->type_name("TEXT")
      ->trigger_on_parse();
  opt("--permanent-status", o.permanent_statuses, "WEBHOOKS_PERMANENT_STATUSES",
      "4xx answers that make a task dead at once instead of retried, comma-separated (e.g. "
      "400,401,403,404,422); not 408, 425, 429 (always retried) or 410 (always disables)")
      ->delimiter(',')
      ->check(app::count(400, 499))
      ->check(permanent_status());
  opt("--max-age", o.max_age, "WEBHOOKS_MAX_AGE", "a task is dead once this old")
      ->check(duration_text());
  opt("--replay-max-age", o.replay_max_age, "WEBHOOKS_REPLAY_MAX_AGE",
      "replay refuses events older than this")
      ->check(duration_text());
  opt("--rotation-grace", o.rotation_grace, "WEBHOOKS_ROTATION_GRACE",
      "how long a rotated-out secret keeps signing (0s: not at all)")
      ->check(duration_text(Zero::allowed));
  opt("--disable-after", o.disable_after, "WEBHOOKS_DISABLE_AFTER",
      "disable an endpoint failing continuously this long (0s: never)")
      ->check(duration_text(Zero::allowed));
  opt("--workers", o.workers, "WEBHOOKS_WORKERS", "delivery worker threads")
      ->check(app::count(1, 256));
  opt("--max-in-flight", o.max_in_flight, "WEBHOOKS_MAX_IN_FLIGHT",
      "concurrent HTTP requests per worker")
      ->check(app::count(1, 10'000));
  opt("--max-endpoint-connections", o.max_endpoint_connections, "WEBHOOKS_MAX_ENDPOINT_CONNECTIONS",
      "concurrent requests (and open connections) to one endpoint, all workers together; "
      "rounded down to a multiple of --workers, at least one per worker")
      ->check(app::count(1, 100'000));
  opt("--batch-size", o.batch_size, "WEBHOOKS_BATCH_SIZE", "tasks claimed per batch")
      ->check(app::count(1, 10'000));
  opt("--connect-timeout", o.connect_timeout, "WEBHOOKS_CONNECT_TIMEOUT",
      "time to connect to an endpoint")
      ->check(duration_text());
  opt("--timeout", o.timeout, "WEBHOOKS_TIMEOUT", "time for a whole delivery attempt")
      ->check(duration_text());
  opt("--delivery-lease", o.delivery_lease, "WEBHOOKS_DELIVERY_LEASE",
      "how long a claimed task is held; after a crash it is taken over this much later")
      ->check(duration_text());
  opt("--poll-interval", o.poll_interval, "WEBHOOKS_POLL_INTERVAL",
      "how often idle workers look for due tasks")
      ->check(duration_text());
  opt("--body-limit", o.body_limit, "WEBHOOKS_BODY_LIMIT",
      "largest request body (bytes); 413 above")
      ->check(app::count(1));
  opt("--http-threads", o.http_threads, "WEBHOOKS_HTTP_THREADS",
      "HTTP worker threads when --fiber-threads is 0 (handlers only: idle and slow connections "
      "hold none)")
      ->check(app::count(1, 4096));
  opt("--fiber-threads", o.fiber_threads, "WEBHOOKS_FIBER_THREADS",
      "threads running the handlers on fibers (default: the number of cores), 0 to 1024; 0: a "
      "pool of --http-threads threads, one request each")
      ->check(app::count(0, 1024));
  opt("--max-connections", o.max_connections, "WEBHOOKS_MAX_CONNECTIONS",
      "open client connections at most; beyond it the one waiting the longest without a "
      "whole request is closed")
      ->check(app::count(1, 1'000'000));
  opt("--request-timeout", o.request_timeout, "WEBHOOKS_REQUEST_TIMEOUT",
      "time for a request's head and body to arrive, from its first byte; 408 after")
      ->check(duration_text());
  opt("--log-level", o.log_level, "WEBHOOKS_LOG_LEVEL", "debug, info, warn or error")
      ->transform(app::log_levels());
  opt("--sqlite-synchronous", o.sqlite_synchronous, "WEBHOOKS_SQLITE_SYNCHRONOUS",
      "SQLite PRAGMA synchronous: NORMAL (durable across crashes), FULL or EXTRA (also across "
      "power loss)")
      ->transform(app::sqlite_synchronous_values());
  app.callback([&o] { check_together(o); });
  parsed.exit_code = app::parse_command_line(app, argc, argv).value_or(-1);
  return parsed;
}

}  // namespace webhooks::publisherd
