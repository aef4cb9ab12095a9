#include "webhooks/publisher/publisher.h"

#include <algorithm>

#include "api/admin_api.h"
#include "api/ingest.h"
#include "console/overview_snapshot.h"
#include "delivery/dispatcher.h"
#include "delivery/http_transport.h"
#include "ops/metrics.h"
#include "ops/ops_events.h"
#include "ops/retention.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/service.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/log.h"
#include "webhooks/publisher/schema.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {
namespace {

std::shared_ptr<db::Database> open_database(const Options& o, const Clock& clock) {
  db::Options db_options;
  db_options.sqlite_synchronous = o.sqlite_synchronous;
  db_options.pool_size =
      o.database_pool_size > 0 ? o.database_pool_size : std::max(8, o.workers + 4);
  db_options.sqlite_background_checkpoint = true;  // halves p99 (docs/operations.md)
  db_options.postgres_statement_timeout_ms = static_cast<int>(o.database_statement_timeout.count());
  db_options.postgres_pool_wait_ms = static_cast<int>(o.database_pool_wait.count());
  std::shared_ptr<db::Database> db = db::Database::open(o.database, db_options);
  db->migrate({idempotency::schema(), schema()}, clock.now_ms());
  return db;
}

HttpDeliveryOptions http_options(const Options& o) {
  HttpDeliveryOptions http;
  http.max_in_flight = static_cast<std::size_t>(o.max_in_flight);
  http.max_connections_per_endpoint = static_cast<std::size_t>(endpoint_connections_per_worker(o));
  http.connect_timeout = o.connect_timeout;
  http.total_timeout = o.timeout;
  http.allow_private_networks = o.allow_private_networks;
  http.allowed_networks = o.allowed_networks;
  http.ca_file = o.ca_file;
  return http;
}

DispatcherOptions dispatcher_options(const Options& o) {
  DispatcherOptions dispatch;
  dispatch.instance_id = o.instance_id;
  dispatch.workers = o.workers;
  dispatch.batch_size = o.batch_size;
  dispatch.endpoint_in_flight = o.max_endpoint_connections;
  dispatch.endpoint_in_flight_per_worker = endpoint_connections_per_worker(o);
  dispatch.lease = o.delivery_lease;
  dispatch.poll_interval = o.poll_interval;
  dispatch.disable_after = o.disable_after;
  dispatch.outcome_rules.permanent_statuses = o.permanent_statuses;
  if (!o.ops_url.empty()) dispatch.ops_merchant_id = kOpsMerchantId;
  return dispatch;
}

RetentionOptions retention_options(const Options& o) {
  RetentionOptions retention;
  retention.max_age = o.retention;
  retention.batch = o.retention_batch;
  retention.pause = o.retention_pause;
  retention.interval = o.maintenance_interval;
  return retention;
}

AdminOptions admin_options(const Options& o) {
  AdminOptions admin;
  admin.admin_token = o.admin_token;
  admin.tokens = o.tokens;
  admin.behind_tls_proxy = o.behind_tls_proxy;
  admin.ssrf.allow_private_networks = o.allow_private_networks;
  admin.ssrf.allowed_networks = o.allowed_networks;
  admin.rotation_grace = o.rotation_grace;
  admin.replay_max_age = o.replay_max_age;
  admin.body_limit = o.body_limit;
  return admin;
}

// The ingest's idempotency records: --ingest-lease and --ingest-ttl; maintenance only while the
// publisher runs (start() starts it, stop() stops it).
idempotency::ServiceOptions idempotency_options(const Options& o) {
  idempotency::ServiceOptions options;
  options.settings = {o.ingest_lease, o.ingest_ttl};
  options.maintenance_interval = std::chrono::milliseconds(0);
  return options;
}

}  // namespace

// Declared in the order they are built; destroyed in reverse, the database last.
struct Publisher::Parts {
  explicit Parts(Options o)
      : options(std::move(o)),
        clock(options.clock != nullptr ? *options.clock : system_clock()),
        own_random(options.random != nullptr ? nullptr : std::make_unique<SecureRandom>()),
        random(options.random != nullptr ? *options.random : *own_random),
        db(open_database(options, clock)),
        idempotency(db, clock, idempotency_options(options)),
        store(db),
        transport(http_options(options)),
        dispatcher(store, transport, options.retry_policy, clock, random, metrics,
                   dispatcher_options(options)),
        ingest(store, clock, metrics, [this] { dispatcher.wake(); }),
        overview(store, clock, {options.overview_budget, options.overview_refresh}),
        api(store, ingest, idempotency.guard(), metrics, clock, overview, admin_options(options),
            [this] { dispatcher.wake(); }),
        retention(store, clock, metrics, retention_options(options)) {
    if (!options.ops_url.empty()) {
      configure_ops_endpoint(store, options.ops_url, options.ops_secret, clock.now_ms());
    }
  }

  Options options;
  const Clock& clock;
  std::unique_ptr<SecureRandom> own_random;
  RandomSource& random;
  std::shared_ptr<db::Database> db;
  idempotency::Service idempotency;
  Store store;
  Metrics metrics;
  HttpTransport transport;
  Dispatcher dispatcher;
  Ingest ingest;
  OverviewSnapshot overview;  // its thread runs while the Publisher runs
  AdminApi api;
  Retention retention;  // its thread runs while the Publisher runs
};

Publisher::Publisher(Options options) {
  validate(options);
  if (options.retention.count() > 0 && options.retention < options.replay_max_age) {
    // Events purged before the replay window ends can no longer be replayed or replayed-missing.
    log_event(spdlog::level::warn,
              {{"event", "retention_shorter_than_replay_max_age"},
               {"retention_ms", options.retention.count()},
               {"replay_max_age_ms", options.replay_max_age.count()},
               {"message",
                "--retention is shorter than --replay-max-age: events purged before the replay "
                "window ends cannot be replayed (docs/operations.md, \"Retention\")"}});
  }
  parts_ = std::make_unique<Parts>(std::move(options));
}

Publisher::~Publisher() { stop(); }

void Publisher::mount(http::Server& server) {
  parts_->api.mount(server);
  if (parts_->options.admin_token.empty() && parts_->options.tokens.empty()) {
    log_event(spdlog::level::warn, {{"event", "no_admin_token"},
                                    {"message",
                                     "no admin token (--admin-token): every route but /healthz and "
                                     "/metrics answers 401"}});
  }
}

void Publisher::start() {
  std::lock_guard lock(mutex_);
  if (state_ == State::stopped) {
    throw Error(ErrorCode::invalid_argument,
                "Publisher::start: this publisher was stopped; build a new one to start again");
  }
  if (state_ == State::running) return;
  parts_->idempotency.start_maintenance(parts_->options.maintenance_interval);
  parts_->dispatcher.start();
  parts_->retention.start();
  parts_->overview.start();
  state_ = State::running;
}

void Publisher::stop() noexcept {
  std::lock_guard lock(mutex_);
  if (state_ == State::stopped) return;
  parts_->dispatcher.stop();  // stop claiming; in-flight batches finish and are recorded
  parts_->idempotency.stop_maintenance();
  parts_->retention.stop();
  parts_->overview.stop();
  state_ = State::stopped;
}

const Options& Publisher::options() const { return parts_->options; }
db::Database& Publisher::database() { return *parts_->db; }
Store& Publisher::store() { return parts_->store; }
Ingest& Publisher::ingest() { return parts_->ingest; }
Dispatcher& Publisher::dispatcher() { return parts_->dispatcher; }
Metrics& Publisher::metrics() { return parts_->metrics; }
idempotency::Guard& Publisher::guard() { return parts_->idempotency.guard(); }

}  // namespace webhooks::publisher
