#include "options.h"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "webhooks/app/deprecated_flags.h"
#include "webhooks/app/flags.h"
#include "webhooks/app/secret_flags.h"
#include "webhooks/duration.h"
#include "webhooks/error.h"
#include "webhooks/publisher/ip_network.h"
#include "webhooks/publisher/retry_policy.h"

namespace webhooks::publisherd {
namespace {

using app::duration_text;
using app::Zero;
using std::chrono::milliseconds;
using webhooks::parse_duration;

// A default duration as the flag shows it: format_duration's, but hours below two days ("24h",
// not "1d").
std::string flag_text(milliseconds value) {
  if (value < std::chrono::hours(48) && value.count() % 3'600'000 == 0 && value.count() > 0) {
    return std::to_string(value.count() / 3'600'000) + "h";
  }
  return webhooks::format_duration(value);
}

// The flags as written: durations as text, converted into `options` once every flag is read
// (to_options), so that messages quote them as given. Every default is publisher::Options'.
struct Flags {
  publisher::Options options;
  std::vector<std::string> admin_tokens, viewer_tokens;  // [NAME:]TOKEN, NAME:TOKEN
  std::string lease = flag_text(options.ingest_lease);
  std::string ttl = flag_text(options.ingest_ttl);
  std::string retry_schedule = options.retry_policy.schedule_text();
  std::string max_age = flag_text(options.retry_policy.max_age());
  std::string replay_max_age = flag_text(options.replay_max_age);
  std::string rotation_grace = flag_text(options.rotation_grace);
  std::string disable_after = flag_text(options.disable_after);
  std::string connect_timeout = flag_text(options.connect_timeout);
  std::string timeout = flag_text(options.timeout);
  std::string delivery_lease = flag_text(options.delivery_lease);
  std::string poll_interval = flag_text(options.poll_interval);
  int http_threads = static_cast<int>(options.server.threads);
  int fiber_threads = static_cast<int>(options.server.fiber_threads);
  int max_connections = static_cast<int>(options.server.max_connections);
  int max_buffered_bytes = static_cast<int>(options.server.max_buffered_bytes);
  std::string request_timeout = flag_text(options.server.request_timeout);
  std::string retention = flag_text(options.retention);
  std::string retention_pause = flag_text(options.retention_pause);
  std::string overview_refresh = flag_text(options.overview_refresh);
  std::string db_statement_timeout = flag_text(options.database_statement_timeout);
  std::string db_pool_wait = flag_text(options.database_pool_wait);
  std::vector<std::string> allowed_networks;  // --allow-network, each checked by IpNetwork::parse
  int schedules_given = 0;                    // --retry-schedule occurrences on the command line
};

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
                    text +
                        " cannot be permanent: a 410 always disables the endpoint (its tasks "
                        "wait until it is enabled again)");
      default:
        throw Error(ErrorCode::invalid_argument,
                    text +
                        " cannot be permanent: 408, 425 and 429 mean \"try later\" and are "
                        "always retried");
    }
  });
}

CLI::Option* option(CLI::App& app, const char* name, auto& value, const char* env,
                    const char* help) {
  return app.add_option(name, value, help)->envname(env)->capture_default_str();
}

// --admin-token and --viewer-token into f.options.tokens: names valid and unique, tokens unique,
// else exit 2 naming the flag.
void to_principals(Flags& f) {
  const auto add = [&](const std::vector<std::string>& values, publisher::Role role,
                       const char* flag) {
    for (const std::string& value : values) {
      try {
        if (role == publisher::Role::viewer && value.find(':') == std::string::npos) {
          throw Error(ErrorCode::invalid_argument, "must be NAME:TOKEN");
        }
        f.options.tokens.push_back(publisher::parse_principal(value, role));
      } catch (const Error& e) {
        throw CLI::ValidationError(flag, e.what());
      }
    }
  };
  add(f.admin_tokens, publisher::Role::admin, "--admin-token");
  add(f.viewer_tokens, publisher::Role::viewer, "--viewer-token");
  try {
    const publisher::Principals check(f.options.tokens);
  } catch (const Error& e) {
    throw CLI::ValidationError("--admin-token/--viewer-token", e.what());
  }
}

// Converts the checked text into `f.options`, then checks what needs several flags: the retry
// schedule as a whole (with --max-age), and the delivery lease: a batch larger than the in-flight
// window is sent in rounds (all of it may go to one endpoint), and the lease must outlast them
// all.
void to_options(Flags& f) {
  publisher::Options& o = f.options;
  to_principals(f);
  try {
    o.retry_policy = publisher::RetryPolicy::parse(f.retry_schedule, parse_duration(f.max_age));
  } catch (const Error& e) {
    throw CLI::ValidationError("--retry-schedule", e.what());
  }
  for (const std::string& text : f.allowed_networks) {
    o.allowed_networks.push_back(publisher::IpNetwork::parse(text));
  }
  o.ingest_lease = parse_duration(f.lease);
  o.ingest_ttl = parse_duration(f.ttl);
  o.replay_max_age = parse_duration(f.replay_max_age);
  o.rotation_grace = parse_duration(f.rotation_grace);
  o.disable_after = parse_duration(f.disable_after);
  o.connect_timeout = parse_duration(f.connect_timeout);
  o.timeout = parse_duration(f.timeout);
  o.delivery_lease = parse_duration(f.delivery_lease);
  o.poll_interval = parse_duration(f.poll_interval);
  o.server.threads = static_cast<std::size_t>(f.http_threads);
  o.server.fiber_threads = static_cast<std::size_t>(f.fiber_threads);
  o.server.max_connections = static_cast<std::size_t>(f.max_connections);
  o.server.max_buffered_bytes = static_cast<std::size_t>(f.max_buffered_bytes);
  o.server.request_timeout = parse_duration(f.request_timeout);
  o.retention = parse_duration(f.retention);
  o.retention_pause = parse_duration(f.retention_pause);
  o.overview_refresh = parse_duration(f.overview_refresh);
  o.database_statement_timeout = parse_duration(f.db_statement_timeout);
  o.database_pool_wait = parse_duration(f.db_pool_wait);
  if (o.ops_url.empty() && !o.ops_secret.empty()) {
    throw CLI::ValidationError("--ops-secret",
                               "signs the operational webhook: give --ops-url too, or drop it");
  }
  if (!o.ops_url.empty() && o.ops_secret.empty()) {
    throw CLI::ValidationError("--ops-url",
                               "needs a signing secret: give --ops-secret, --ops-secret-file or "
                               "WEBHOOKS_OPS_SECRET");
  }
  const int rounds = publisher::batch_rounds(o);
  if (o.delivery_lease <= o.timeout * rounds) {
    throw CLI::ValidationError(
        "--delivery-lease",
        f.delivery_lease + " must be longer than --timeout (" + f.timeout + ") times the " +
            std::to_string(rounds) +
            " round(s) a batch may need, ceil(--batch-size / min(--max-in-flight, "
            "--max-endpoint-connections / --workers)), or a slow batch could be taken over "
            "while it is being sent");
  }
}

// Entries come as one value (1s,5m) or, from a --config list ([1s, 5m]), several; they are
// joined back so that RetryPolicy::parse judges every form alike ([] or 1s,,5m: exit 2). CLI11
// would append a second --retry-schedule to the first (1s then 5s: [1s, 5s]), so the callback
// runs once per occurrence (trigger_on_parse) and a second one is refused. The command line still
// replaces the file's and the environment's schedule: CLI11 reads those only for flags the
// command line did not give.
void add_retry_schedule(CLI::App& app, Flags& f) {
  app.add_option_function<std::vector<std::string>>(
         "--retry-schedule",
         [&f](const std::vector<std::string>& entries) {
           if (++f.schedules_given > 1) {
             throw CLI::ValidationError(
                 "--retry-schedule",
                 "given twice; write the whole schedule once, comma-separated, e.g. "
                 "--retry-schedule 5s,5m,30m");
           }
           f.retry_schedule.clear();
           for (std::size_t i = 0; i < entries.size(); ++i) {
             f.retry_schedule += (i ? "," : "") + entries[i];
           }
         },
         "waits between attempts (n entries: n+1 attempts), jittered by +-20%")
      ->envname("WEBHOOKS_RETRY_SCHEDULE")
      ->default_str(f.retry_schedule)
      ->type_name("TEXT")
      ->trigger_on_parse();
}

void add_api_flags(CLI::App& app, Flags& f) {
  publisher::Options& o = f.options;
  option(app, "--listen", o.listen, "WEBHOOKS_LISTEN",
         "HOST:PORT to serve on; port 0 picks a free one")
      ->check(app::listen_address());
  option(app, "--db", o.database, "WEBHOOKS_DB", "SQLite file path or postgres:// URL");
  option(app, "--lease", f.lease, "WEBHOOKS_LEASE",
         "how long an ingest request's idempotency lease lasts without a heartbeat")
      ->transform(app::deprecated_bare_number("--lease", app::DurationUnit::seconds))
      ->check(duration_text());
  option(app, "--ttl", f.ttl, "WEBHOOKS_TTL", "how long idempotency records are kept")
      ->transform(app::deprecated_bare_number("--ttl", app::DurationUnit::seconds))
      ->check(duration_text());
  app::add_secret_option(
      app,
      {"--admin-token", "WEBHOOKS_ADMIN_TOKEN",
       "NAME:TOKEN, repeatable (a bare TOKEN is named admin): a bearer token for every route but "
       "/healthz and /metrics, and the console with its actions (one token is required for them "
       "to answer)",
       app::bearer_token()},
      f.admin_tokens);
  app::add_secret_option(
      app,
      {"--viewer-token", "WEBHOOKS_VIEWER_TOKEN",
       "NAME:TOKEN, repeatable: a read-only bearer token (GET and HEAD; the console without "
       "actions)",
       app::bearer_token()},
      f.viewer_tokens);
  app.add_flag("--behind-tls-proxy", o.behind_tls_proxy,
               "a proxy terminating TLS is in front: the console's cookie is marked Secure and "
               "its sign-in expects an https:// origin")
      ->envname("WEBHOOKS_BEHIND_TLS_PROXY");
  app.add_flag("--allow-private-networks", o.allow_private_networks,
               "deliver to loopback, private, link-local and CGNAT addresses (tests, demos)")
      ->envname("WEBHOOKS_ALLOW_PRIVATE_NETWORKS");
  app.add_option("--allow-network", f.allowed_networks,
                 "deliver to the addresses of this network too, whatever their class "
                 "(repeatable; CIDR, e.g. 10.20.0.0/16 or fd00:ab::/32; an address alone is /32 "
                 "or /128); other private addresses stay refused")
      ->envname("WEBHOOKS_ALLOW_NETWORK")
      ->delimiter(',')
      ->type_name("CIDR")
      ->check(
          app::accepted_by("", [](const std::string& text) { publisher::IpNetwork::parse(text); }));
  option(app, "--ca-file", o.ca_file, "WEBHOOKS_CA_FILE",
         "PEM file of the certificate authorities https:// endpoints are verified against "
         "(default: the system's)")
      ->check(CLI::ExistingFile);
  add_retry_schedule(app, f);
  option(app, "--permanent-status", o.permanent_statuses, "WEBHOOKS_PERMANENT_STATUSES",
         "4xx answers that make a task dead at once instead of retried, comma-separated (e.g. "
         "400,401,403,404,422); not 408, 425, 429 (always retried) or 410 (always disables)")
      ->delimiter(',')
      ->check(app::count(400, 499))
      ->check(permanent_status());
  option(app, "--max-age", f.max_age, "WEBHOOKS_MAX_AGE", "a task is dead once this old")
      ->check(duration_text());
  option(app, "--replay-max-age", f.replay_max_age, "WEBHOOKS_REPLAY_MAX_AGE",
         "replay refuses events older than this")
      ->check(duration_text());
  option(app, "--rotation-grace", f.rotation_grace, "WEBHOOKS_ROTATION_GRACE",
         "how long a rotated-out secret keeps signing (0s: not at all)")
      ->check(duration_text(Zero::allowed));
  option(app, "--disable-after", f.disable_after, "WEBHOOKS_DISABLE_AFTER",
         "disable an endpoint failing continuously this long (0s: never)")
      ->check(duration_text(Zero::allowed));
}

void add_delivery_flags(CLI::App& app, Flags& f) {
  publisher::Options& o = f.options;
  option(app, "--workers", o.workers, "WEBHOOKS_WORKERS", "delivery worker threads")
      ->check(app::count(1, 256));
  option(app, "--max-in-flight", o.max_in_flight, "WEBHOOKS_MAX_IN_FLIGHT",
         "concurrent HTTP requests per worker")
      ->check(app::count(1, 10'000));
  option(app, "--max-endpoint-connections", o.max_endpoint_connections,
         "WEBHOOKS_MAX_ENDPOINT_CONNECTIONS",
         "concurrent requests (and open connections) to one endpoint, all workers and daemons "
         "together: its share of the delivery slots; rounded down to a multiple of --workers, at "
         "least one per worker")
      ->check(app::count(1, 100'000));
  option(app, "--batch-size", o.batch_size, "WEBHOOKS_BATCH_SIZE",
         "attempts each worker keeps in flight (its delivery slots)")
      ->check(app::count(1, 10'000));
  option(app, "--connect-timeout", f.connect_timeout, "WEBHOOKS_CONNECT_TIMEOUT",
         "time to connect to an endpoint")
      ->check(duration_text());
  option(app, "--timeout", f.timeout, "WEBHOOKS_TIMEOUT", "time for a whole delivery attempt")
      ->check(duration_text());
  option(app, "--delivery-lease", f.delivery_lease, "WEBHOOKS_DELIVERY_LEASE",
         "how long a claimed task is held; after a crash it is taken over this much later")
      ->check(duration_text());
  option(app, "--poll-interval", f.poll_interval, "WEBHOOKS_POLL_INTERVAL",
         "how often idle workers look for due tasks")
      ->check(duration_text());
}

// --ops-url: http:// or https:// then a host, no spaces (the address itself is checked when an
// event is delivered, like any endpoint's).
CLI::Validator ops_url() {
  return app::accepted_by("URL", [](const std::string& text) {
    const std::size_t scheme = text.starts_with("http://")    ? 7
                               : text.starts_with("https://") ? 8
                                                              : 0;
    if (scheme == 0 || text.size() == scheme ||
        text.find_first_of(" \t\r\n") != std::string::npos) {
      throw Error(ErrorCode::invalid_argument,
                  "must be an http:// or https:// URL without spaces, e.g. "
                  "https://ops.example.com/webhooks");
    }
  });
}

void add_maintenance_flags(CLI::App& app, Flags& f) {
  publisher::Options& o = f.options;
  option(app, "--retention", f.retention, "WEBHOOKS_RETENTION",
         "delete events older than this, with their tasks and attempts, once every task is "
         "finished (succeeded or dead); 0s: keep forever")
      ->check(duration_text(Zero::allowed));
  option(app, "--retention-batch", o.retention_batch, "WEBHOOKS_RETENTION_BATCH",
         "events deleted per transaction by retention")
      ->check(app::count(1, 100'000));
  option(app, "--retention-pause", f.retention_pause, "WEBHOOKS_RETENTION_PAUSE",
         "pause between two retention transactions (lets delivery in)")
      ->check(duration_text(Zero::allowed));
  option(app, "--overview-refresh", f.overview_refresh, "WEBHOOKS_OVERVIEW_REFRESH",
         "how often the console's overview is recounted once counting it per request gets slow "
         "(over 20 ms); a count taking longer than a tenth of this waits 10 times its own time")
      ->check(duration_text());
  option(app, "--ops-url", o.ops_url, "WEBHOOKS_OPS_URL",
         "deliver endpoint.failing and endpoint.disabled events (operations) to this URL, signed "
         "with --ops-secret")
      ->check(ops_url());
  app::add_secret_option(
      app,
      {"--ops-secret", "WEBHOOKS_OPS_SECRET",
       "signing secret (whsec_...) of the --ops-url deliveries", app::signing_secret()},
      o.ops_secret);
}

void add_server_flags(CLI::App& app, Flags& f, std::string& log_level) {
  publisher::Options& o = f.options;
  option(app, "--body-limit", o.body_limit, "WEBHOOKS_BODY_LIMIT",
         "largest request body (bytes); 413 above")
      ->check(app::count(1));
  CLI::Option* threads =
      option(app, "--threads", f.http_threads, "WEBHOOKS_THREADS",
             "HTTP worker threads when --fiber-threads is 0 (handlers only: idle and slow "
             "connections hold none)")
          ->check(app::count(1, 4096));
  app::add_deprecated_alias(app, threads, "--http-threads");
  option(app, "--fiber-threads", f.fiber_threads, "WEBHOOKS_FIBER_THREADS",
         "event-loop threads, each reading its connections and running their handlers on fibers "
         "(default: the number of cores), 0 to 1024; 0: one loop and a pool of --threads "
         "threads, one request each")
      ->check(app::count(0, 1024));
  option(app, "--max-connections", f.max_connections, "WEBHOOKS_MAX_CONNECTIONS",
         "open client connections at most; beyond it the one waiting the longest without a "
         "whole request is closed")
      ->check(app::count(1, 1'000'000));
  option(app, "--max-buffered-bytes", f.max_buffered_bytes, "WEBHOOKS_MAX_BUFFERED_BYTES",
         "request bytes every connection together may hold buffered (heads, bodies being "
         "received); a request that would pass it is answered 503 server_busy with Retry-After")
      ->check(app::count(65536, 2147483647));
  option(app, "--request-timeout", f.request_timeout, "WEBHOOKS_REQUEST_TIMEOUT",
         "time for a request's head and body to arrive, from its first byte; 408 after")
      ->check(duration_text());
  option(app, "--log-level", log_level, "WEBHOOKS_LOG_LEVEL", "debug, info, warn or error")
      ->transform(app::log_levels());
  option(app, "--sqlite-synchronous", o.sqlite_synchronous, "WEBHOOKS_SQLITE_SYNCHRONOUS",
         "SQLite PRAGMA synchronous: NORMAL (durable across crashes), FULL or EXTRA (also "
         "across power loss)")
      ->transform(app::sqlite_synchronous_values());
  option(app, "--db-statement-timeout", f.db_statement_timeout, "WEBHOOKS_DB_STATEMENT_TIMEOUT",
         "PostgreSQL: time one statement may take (the server's statement_timeout; the daemon "
         "also gives up on a server that stopped answering 250ms after it); a request then "
         "answers 503 storage_unavailable with Retry-After; 0s: no bound, at most 24h")
      ->check(duration_text(Zero::allowed));
  option(app, "--db-pool-wait", f.db_pool_wait, "WEBHOOKS_DB_POOL_WAIT",
         "PostgreSQL: time a request waits for a pooled database connection (one to come free "
         "or a new one to open); then 503 storage_unavailable with Retry-After; 0s: no bound, "
         "at most 24h")
      ->check(duration_text(Zero::allowed));
}

}  // namespace

Parsed parse_options(int argc, char** argv) {
  Parsed parsed;
  Flags flags;
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
  add_api_flags(app, flags);
  add_delivery_flags(app, flags);
  add_server_flags(app, flags, parsed.log_level);
  add_maintenance_flags(app, flags);
  app.callback([&flags] { to_options(flags); });
  parsed.exit_code = app::parse_command_line(app, argc, argv).value_or(-1);
  parsed.options = std::move(flags.options);
  return parsed;
}

}  // namespace webhooks::publisherd
