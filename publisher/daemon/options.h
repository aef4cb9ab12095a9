// webhooks-publisherd's command line: every flag, its default, its environment variable.
#pragma once

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace webhooks::publisherd {

struct Options {
  std::string listen = "127.0.0.1:8780";
  std::string db = "./publisher.db";
  double lease_seconds = 30;    // idempotency lease of ingest requests
  double ttl_seconds = 86'400;  // idempotency records kept this long
  std::string admin_token;      // bearer token of the admin API and ingest (or --admin-token-file)
  bool allow_private_networks = false;
  std::string retry_schedule = "5s,5m,30m,2h,5h,10h,10h";
  std::vector<int> permanent_statuses;  // 4xx answers that end a task at once (none by default)
  std::string max_age = "3d";
  std::string replay_max_age = "7d";
  std::string rotation_grace = "24h";
  std::string disable_after = "5d";
  int workers = 4;
  int max_in_flight = 64;             // per worker
  int max_endpoint_connections = 32;  // to one endpoint, all workers together
  int batch_size = 32;
  std::string connect_timeout = "5s";
  std::string timeout = "15s";
  std::string delivery_lease = "2m";
  std::string poll_interval = "250ms";
  std::size_t body_limit = 1 << 20;
  int http_threads = 64;   // HTTP worker threads when fiber_threads is 0
  // Handlers on fibers on this many threads (0: http_threads threads instead); the cores.
  int fiber_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int max_connections = 4096;          // open client connections (webhooks::http::Server)
  std::string request_timeout = "30s";  // a request's head and body, from its first byte
  std::string log_level = "info";
  std::string sqlite_synchronous = "NORMAL";
};

// Parses argv (flags, WEBHOOKS_* environment variables, an optional --config file; the admin token
// also from --admin-token-file, app/secret_flags.h) and checks
// every value, alone and together (--retry-schedule with --max-age, --delivery-lease against
// --timeout and the batch rounds), so a bad one exits 2 here. `exit_code >= 0` when the process
// should exit (help, bad flag).
struct Parsed {
  Options options;
  int exit_code = -1;
};
Parsed parse_options(int argc, char** argv);

// Concurrent requests to one endpoint per worker: --max-endpoint-connections / --workers, at
// least 1.
int endpoint_connections_per_worker(const Options& o);

}  // namespace webhooks::publisherd
