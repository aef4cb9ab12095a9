// webhooks-publisherd: parse flags, build the components, serve until SIGTERM, then stop
// claiming, let in-flight attempts finish and be recorded, and exit 0.
#include <httplib.h>

#include <algorithm>
#include <iostream>

#include "options.h"
#include "webhooks/app/flags.h"
#include "webhooks/app/server.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/idempotency/lease_keeper.h"
#include "webhooks/idempotency/maintenance.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/log.h"
#include "webhooks/publisher/admin_api.h"
#include "webhooks/publisher/dispatcher.h"
#include "webhooks/publisher/duration.h"
#include "webhooks/publisher/http_transport.h"
#include "webhooks/publisher/ingest.h"
#include "webhooks/publisher/schema.h"

namespace {

using namespace webhooks;
using namespace webhooks::publisher;

int serve(const publisherd::Options& o) {
  Clock& clock = system_clock();
  db::Options db_options;
  db_options.sqlite_synchronous = o.sqlite_synchronous;
  db_options.pool_size = std::max(8, o.workers + 4);
  db_options.sqlite_background_checkpoint = true;  // halves p99 (docs/operations.md)
  std::shared_ptr<db::Database> db = db::Database::open(o.db, db_options);
  db->migrate({idempotency::schema(), schema()}, clock.now_ms());

  idempotency::Store records(
      db, {app::seconds_to_millis(o.lease_seconds), app::seconds_to_millis(o.ttl_seconds)});
  idempotency::LeaseKeeper keeper(records, clock);
  idempotency::Maintenance maintenance(records, clock);
  idempotency::Guard guard(records, keeper, clock);

  Store store(db);
  Metrics metrics;
  const RetryPolicy policy =
      RetryPolicy::parse(o.retry_schedule, parse_duration(o.max_age, "max age"));
  SecureRandom random;
  HttpDeliveryOptions http;
  http.max_in_flight = static_cast<std::size_t>(o.max_in_flight);
  http.max_connections_per_endpoint =
      static_cast<std::size_t>(publisherd::endpoint_connections_per_worker(o));
  http.connect_timeout = parse_duration(o.connect_timeout, "connect timeout");
  http.total_timeout = parse_duration(o.timeout, "timeout");
  http.allow_private_networks = o.allow_private_networks;
  HttpTransport transport(http);
  DispatcherOptions dispatch;
  dispatch.workers = o.workers;
  dispatch.batch_size = o.batch_size;
  dispatch.lease = parse_duration(o.delivery_lease, "delivery lease");
  dispatch.poll_interval = parse_duration(o.poll_interval, "poll interval");
  dispatch.disable_after = parse_duration(o.disable_after, "disable after");
  dispatch.outcome_rules.permanent_statuses = o.permanent_statuses;
  Dispatcher dispatcher(store, transport, policy, clock, random, metrics, dispatch);
  Ingest ingest(store, clock, metrics, [&dispatcher] { dispatcher.wake(); });

  AdminOptions admin;
  admin.admin_token = o.admin_token;
  admin.ssrf.allow_private_networks = o.allow_private_networks;
  admin.rotation_grace = parse_duration(o.rotation_grace, "rotation grace");
  admin.replay_max_age = parse_duration(o.replay_max_age, "replay max age");
  admin.body_limit = o.body_limit;
  AdminApi api(store, ingest, guard, metrics, clock, admin, [&dispatcher] { dispatcher.wake(); });

  http::Server server;
  api.mount(server);
  const app::ListenAddress address = app::parse_listen(o.listen);
  app::ServerTuning tuning;
  tuning.threads = static_cast<std::size_t>(o.http_threads);
  // Its handlers only block on the database (deliveries run on the dispatcher's threads).
  tuning.fiber_threads = static_cast<std::size_t>(o.fiber_threads);
  tuning.max_connections = static_cast<std::size_t>(o.max_connections);
  tuning.request_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      parse_duration(o.request_timeout, "request timeout"));
  const int port = app::bind_and_announce(server, address, tuning);
  log_event(spdlog::level::info, {{"event", "started"},
                                  {"listen", address.host + ":" + std::to_string(port)},
                                  {"db", db->describe()},
                                  {"instance_id", dispatcher.instance_id()},
                                  {"retry_schedule", policy.schedule_text()},
                                  {"workers", o.workers}});
  if (o.admin_token.empty()) {
    log_event(spdlog::level::warn,
              {{"event", "no_admin_token"},
               {"message", "no --admin-token: every route but /healthz and /metrics answers 401"}});
  }
  dispatcher.start();
  {
    const app::StopOnSignal stop_on_signal(server, port);
    server.listen_after_bind();
  }
  log_event(spdlog::level::info, {{"event", "stopping"}});
  dispatcher.stop();  // stop claiming; in-flight batches finish and are recorded
  log_event(spdlog::level::info, {{"event", "stopped"}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  app::limit_malloc_arenas();
  app::block_stop_signals();
  const publisherd::Parsed parsed = publisherd::parse_options(argc, argv);
  if (parsed.exit_code >= 0) return parsed.exit_code;
  configure_json_logging(parsed.options.log_level);
  try {
    return serve(parsed.options);
  } catch (const std::exception& e) {
    log_event(spdlog::level::err, {{"event", "fatal"}, {"error", e.what()}});
    std::cerr << "webhooks-publisherd: " << e.what() << "\n";
    return 1;
  }
}
