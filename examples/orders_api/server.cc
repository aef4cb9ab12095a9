#include "server.h"

#include <httplib.h>

#include <iostream>
#include <map>

#include "console/console.h"
#include "keys.h"
#include "orders.h"
#include "payouts/partner_client.h"
#include "payouts/payouts.h"
#include "storage.h"
#include "webhooks/app/flags.h"
#include "webhooks/app/server.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/idempotency/http.h"
#include "webhooks/idempotency/service.h"
#include "webhooks/log.h"
#include "webhooks/outbox/relay.h"
#include "webhooks/random.h"

namespace webhooks::orders {
namespace {

using namespace std::chrono;

std::map<std::string, std::string, std::less<>> parse_api_keys(
    const std::vector<std::string>& specs) {
  std::map<std::string, std::string, std::less<>> keys;
  for (const std::string& spec : specs) {
    const std::size_t colon = spec.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) {
      throw Error(ErrorCode::invalid_argument, "--api-key expects KEY:MERCHANT_ID");
    }
    keys[spec.substr(0, colon)] = spec.substr(colon + 1);
  }
  return keys;
}

PartnerOptions partner_options(const std::string& url, std::int64_t timeout_ms, int attempts) {
  PartnerOptions options;
  options.url = url;
  options.timeout = milliseconds(timeout_ms);
  options.attempts = attempts;
  return options;
}

// The idempotency core's settings: --lease and --ttl; maintenance every 10 s, or every lease when
// the lease is shorter (tests pass short leases); created orders' answers stored by reference.
idempotency::ServiceOptions idempotency_options(const Config& config) {
  idempotency::ServiceOptions options;
  options.settings = {app::seconds_to_millis(config.lease_seconds),
                      app::seconds_to_millis(config.ttl_seconds)};
  options.maintenance_interval = std::min<milliseconds>(seconds(10), options.settings.lease);
  // POST /orders' answers are stored as the order's id and rendered again on replay.
  options.settings.renderer = std::make_shared<CreatedOrderAnswers>();
  return options;
}

// The routes, on top of the services they call.
class Api {
 public:
  Api(const Config& config, std::shared_ptr<db::Database> db, const Clock& clock)
      : keys_(parse_api_keys(config.api_keys)),
        db_(db),
        idempotency_(db, clock, idempotency_options(config)),
        clock_(clock),
        ids_(clock),
        partner_(partner_options(config.partner_url, config.partner_timeout_ms,
                                 config.partner_attempts)),
        orders_(*db, clock, ids_,
                {milliseconds(config.operation_delay_ms), config.break_transaction_once}),
        payouts_(store_, clock, ids_, partner_,
                 {milliseconds(config.operation_delay_ms), config.crash_after_partner_commit}),
        console_(keys_, store_, *db, clock, config.behind_tls_proxy) {}

  void routes(http::Server& server) {
    server.Post("/orders", calling(&Api::create_order));
    server.Get(R"(/orders/([^/]+))", calling(&Api::get_order));
    server.Put(R"(/orders/([^/]+))", calling(&Api::update_order));
    server.Post("/payouts", calling(&Api::create_payout));
    server.Get(R"(/payouts/([^/]+))", calling(&Api::get_payout));
    server.Get(R"(/v1/idempotency-keys/(.+))", calling(&Api::get_key));
    server.Get("/healthz",
               [this](const httplib::Request&, httplib::Response& res) { healthz(res); });
    console_.mount(server);
    server.set_exception_handler(idempotency::answer_exception);
  }

 private:
  // A route's handler: this object's `route`.
  httplib::Server::Handler calling(void (Api::*route)(const httplib::Request&,
                                                      httplib::Response&)) {
    return [this, route](const httplib::Request& req, httplib::Response& res) {
      (this->*route)(req, res);
    };
  }

  // POST /orders: record, order and outbox row in one transaction, grouped with concurrent
  // requests'.
  void create_order(const httplib::Request& req, httplib::Response& res) {
    const auto merchant = authenticate(req, res);
    if (!merchant) return;
    const OrderDraft draft = orders_.draft(*merchant, req.body);  // no database access
    idempotency::handle_in_transaction(
        guard_, req, res, merchant_scope(*merchant),
        [&](db::Transaction& tx, const idempotency::BeginResult& begun) {
          return orders_.create(tx, begun.lease.key, draft);
        });
  }

  // GET /orders/ID.
  void get_order(const httplib::Request& req, httplib::Response& res) {
    if (const auto merchant = authenticate(req, res)) {
      write(orders_.get(*merchant, req.matches[1]), res);
    }
  }

  // PUT /orders/ID: idempotent by nature, so the key is optional: with one, its record commits
  // in the same transaction as the order and outbox row; without, that transaction alone (also
  // grouped).
  void update_order(const httplib::Request& req, httplib::Response& res) {
    const auto merchant = authenticate(req, res);
    if (!merchant) return;
    const std::string id = req.matches[1];
    if (req.has_header("Idempotency-Key")) {
      idempotency::handle_in_transaction(guard_, req, res, merchant_scope(*merchant),
                                         [&](db::Transaction& tx, const idempotency::BeginResult&) {
                                           return orders_.update(tx, *merchant, id, req.body);
                                         });
      return;
    }
    Response answer;
    guard_.group().run(
        [&](db::Transaction& tx) { answer = orders_.update(tx, *merchant, id, req.body); });
    write(answer, res);
  }

  // POST /payouts.
  void create_payout(const httplib::Request& req, httplib::Response& res) {
    guarded(req, res, [&](idempotency::Attempt& a, const std::string& merchant) {
      return payouts_.create(a, merchant, req.body);
    });
  }

  // GET /payouts/ID.
  void get_payout(const httplib::Request& req, httplib::Response& res) {
    if (const auto merchant = authenticate(req, res)) {
      write(payouts_.get(*merchant, req.matches[1]), res);
    }
  }

  // GET /v1/idempotency-keys/KEY: the caller's own record of KEY (keys.h).
  void get_key(const httplib::Request& req, httplib::Response& res) {
    if (const auto merchant = authenticate(req, res)) {
      write(lookup_key(store_, *merchant, req.matches[1].str(), clock_.now_ms()), res);
    }
  }

  // GET /healthz: 200 while the database answers SELECT 1 within idempotency::kHealthTimeout,
  // else 503 storage_unavailable saying it is unreachable.
  void healthz(httplib::Response& res) {
    if (idempotency::database_reachable(*db_, res)) {
      app::json_answer(res, 200, R"({"status":"ok"})");
    }
  }

  // The merchant of the bearer API key, or nullopt after answering 401 (counted as a failure of
  // the client's address), or 429 with Retry-After while that address is throttled.
  std::optional<std::string> authenticate(const httplib::Request& req, httplib::Response& res) {
    console::FailureThrottle& throttle = console_.throttle();
    if (const auto message = console::throttled(throttle, req, res)) {
      app::json_error(res, 429, "too_many_failures", *message);
      return std::nullopt;
    }
    const auto it = keys_.find(app::bearer_token(req));
    if (it != keys_.end()) return it->second;
    throttle.record_failure(req.remote_addr);
    res.set_header("WWW-Authenticate", "Bearer");
    app::json_error(res, 401, "unauthorized",
                    "a valid API key is required (Authorization: Bearer KEY)");
    return std::nullopt;
  }

  template <typename Op>
  void guarded(const httplib::Request& req, httplib::Response& res, Op op) {
    const auto merchant = authenticate(req, res);
    if (!merchant) return;
    idempotency::handle(guard_, req, res, merchant_scope(*merchant),
                        [&](idempotency::Attempt& attempt) { return op(attempt, *merchant); });
  }

  std::map<std::string, std::string, std::less<>> keys_;  // found by a string_view: no copy
  std::shared_ptr<db::Database> db_;
  idempotency::Service idempotency_;
  idempotency::Store& store_ = idempotency_.store();
  idempotency::Guard& guard_ = idempotency_.guard();
  const Clock& clock_;
  UuidV7Generator ids_;
  PartnerClient partner_;
  Orders orders_;
  Payouts payouts_;
  KeysConsole console_;
};

}  // namespace

int serve(const Config& config) {
  configure_json_logging(config.log_level);
  const app::ListenAddress address = app::parse_listen(config.listen);
  const Clock& clock = system_clock();
  // WAL checkpoints (SQLite) off the commit path, as webhooks-publisherd and merchant-receiver: a
  // checkpoint inside a group's commit holds up every request of the group.
  db::Options db_options;
  db_options.sqlite_background_checkpoint = true;
  db_options.postgres_statement_timeout_ms = config.db_statement_timeout_ms;
  db_options.postgres_pool_wait_ms = config.db_pool_wait_ms;
  std::shared_ptr<db::Database> db = db::Database::open(config.db, db_options);
  prepare_database(*db, clock.now_ms());
  if (config.api_keys.empty()) {
    log_event(spdlog::level::warn, {{"event", "no_api_keys"},
                                    {"message", "no --api-key given: every request gets 401"}});
  }
  Api api(config, db, clock);
  // Built before the port is announced, as the partner client is in `api`: --publisher-url was
  // checked while parsing (app::server_url), and anything the relay still refused would
  // stop the start here, before `listening on`.
  SecureRandom random;
  std::unique_ptr<outbox::Relay> relay;
  if (!config.publisher_url.empty()) {
    outbox::RelayOptions options;
    options.publisher_url = config.publisher_url;
    options.publisher_token = config.publisher_token;
    options.poll_interval = milliseconds(config.relay_poll_ms);
    options.sent_retention = app::seconds_to_millis(config.outbox_retention_seconds);
    relay = std::make_unique<outbox::Relay>(db, clock, random, options);
  }
  http::Server server;
  http::limit_request_bodies(server, http::kDefaultBodyLimit, nullptr, http::Bodies::json);
  api.routes(server);
  app::ServerTuning tuning;
  tuning.threads = static_cast<std::size_t>(std::max(1, config.threads));
  // Handlers only block on the database; the partner call runs through http::run_blocking.
  tuning.fiber_threads = static_cast<std::size_t>(config.fiber_threads);
  tuning.max_connections = static_cast<std::size_t>(config.max_connections);
  tuning.max_buffered_bytes = static_cast<std::size_t>(config.max_buffered_bytes);
  tuning.request_timeout = milliseconds(config.request_timeout_ms);
  const int port = app::bind_and_announce(server, address, tuning);
  log_event(spdlog::level::info,
            {{"event", "started"},
             {"db", db->describe()},
             {"lease_ms", app::seconds_to_millis(config.lease_seconds).count()}});
  if (relay) relay->start();
  app::StopOnSignal stop(server, port);
  server.listen_after_bind();
  if (relay) relay->stop();  // finishes the post under way; unsent rows wait for the next start
  return 0;
}

}  // namespace webhooks::orders
