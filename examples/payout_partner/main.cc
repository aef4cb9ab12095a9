// payout-partner: a stand-in for a bank's payout API. POST /transfers creates a transfer,
// deduplicated on X-Idempotency-Key; POST /transfers/{id}/reversals undoes one (always
// deduplicated, once per transfer); GET /transfers lists them with reversed_by. Faults on demand:
// answers lost after the commit (--drop-after-commit), no deduplication (--ignore-idempotency-key),
// slowness
// (--delay). docs/orders-api.md, "The payout partner".
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "reversals.h"
#include "transfers.h"
#include "webhooks/app/deprecated_flags.h"
#include "webhooks/app/flags.h"
#include "webhooks/app/server.h"
#include "webhooks/clock.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/http.h"
#include "webhooks/json_parse.h"
#include "webhooks/log.h"
#include "webhooks/uuid.h"

namespace webhooks::partner {
namespace {

// The idempotency key comes from a header, any bytes: invalid UTF-8 is written as U+FFFD instead
// of failing the answer (nlohmann's dump throws type_error 316 on it).
std::string to_text(const nlohmann::json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct Config {
  std::string listen = "127.0.0.1:8782";
  std::string db = "./partner.db";
  bool ignore_idempotency_key = false;
  int drop_after_commit = 0;
  std::int64_t delay_ms = 0;
  std::string log_level = "info";
};

// Takes one from `counter` if it is positive.
bool take_one(std::atomic<int>& counter) {
  int left = counter.load();
  while (left > 0) {
    if (counter.compare_exchange_weak(left, left - 1)) return true;
  }
  return false;
}

class Partner {
 public:
  Partner(const Config& config, db::Database& db)
      : config_(config),
        transfers_(db, !config.ignore_idempotency_key),
        reversals_(db),
        drops_left_(config.drop_after_commit),
        ids_(system_clock()) {}

  void create_tables() {
    transfers_.create_tables();
    reversals_.create_tables();
  }

  void routes(http::Server& server) {
    server.Post("/transfers",
                [this](const httplib::Request& req, httplib::Response& res) { create(req, res); });
    server.Post(R"(/transfers/([^/]+)/reversals)",
                [this](const httplib::Request& req, httplib::Response& res) { reverse(req, res); });
    server.Get("/transfers", [this](const httplib::Request&, httplib::Response& res) {
      nlohmann::json list = nlohmann::json::array();
      for (const Transfer& t : transfers_.list()) list.push_back(to_json(t));
      app::json_answer(res, 200, to_text(nlohmann::json{{"transfers", list}}));
    });
    server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      app::json_answer(res, 200, R"({"status":"ok"})");
    });
    server.set_exception_handler(idempotency::answer_exception);
  }

 private:
  void create(const httplib::Request& req, httplib::Response& res) {
    if (config_.delay_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(config_.delay_ms));
    const nlohmann::json body = webhooks::parse_json_or_discarded(req.body);
    if (body.is_discarded())
      return app::json_error(res, 400, "invalid_json",
                             "the body is not JSON, or nests deeper than 128 levels");
    std::string error;
    const auto request = parse_transfer_request(body, error);
    if (!request) return app::json_error(res, 422, "invalid_transfer", error);
    const std::string key = req.get_header_value("X-Idempotency-Key");
    const auto result =
        transfers_.create(key, *request, "tr_" + ids_.next(), system_clock().now_ms());
    if (result.outcome == Transfers::Outcome::key_reused) {
      return app::json_error(res, 422, "idempotency_key_reused",
                             "this X-Idempotency-Key was used for a different transfer");
    }
    const bool replayed = result.outcome == Transfers::Outcome::replayed;
    log_event(spdlog::level::info, {{"event", replayed ? "transfer_replayed" : "transfer_created"},
                                    {"transfer_id", result.transfer.id},
                                    {"idempotency_key", key}});
    if (take_one(drops_left_)) {
      // The transfer is committed; the caller never learns it.
      const bool dropped = app::drop_connection(req);
      log_event(
          spdlog::level::warn,
          {{"event", "answer_dropped"}, {"transfer_id", result.transfer.id}, {"dropped", dropped}});
      if (!dropped) {
        res.status = 201;  // no socket found: abort the body instead, so the answer is unusable
        res.set_content_provider(
            1, "application/json",
            [](std::size_t, std::size_t, httplib::DataSink&) { return false; });
      }
      return;
    }
    if (replayed) res.set_header("Idempotent-Replayed", "true");
    app::json_answer(res, replayed ? 200 : 201, to_text(to_json(result.transfer)));
  }

  // POST /transfers/{id}/reversals: 201 new, 200 replayed (same key, same transfer), 404
  // transfer_not_found, 409 already_reversed (with "reversal"), 422 idempotency_key_reused.
  void reverse(const httplib::Request& req, httplib::Response& res) {
    if (config_.delay_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(config_.delay_ms));
    const std::string transfer_id = req.matches[1];
    const std::string key = req.get_header_value("X-Idempotency-Key");
    const auto result =
        reversals_.create(key, transfer_id, "rv_" + ids_.next(), system_clock().now_ms());
    using Outcome = Reversals::Outcome;
    switch (result.outcome) {
      case Outcome::no_transfer:
        return app::json_error(res, 404, "transfer_not_found", "no transfer has this id");
      case Outcome::key_reused:
        return app::json_error(res, 422, "idempotency_key_reused",
                               "this X-Idempotency-Key was used for another transfer's reversal");
      case Outcome::already_reversed: {
        const nlohmann::json body = {
            {"error",
             {{"code", "already_reversed"},
              {"message", "this transfer was already reversed, by the reversal in \"reversal\""}}},
            {"reversal", to_json(result.reversal)}};
        return app::json_answer(res, 409, to_text(body));
      }
      case Outcome::replayed:
      case Outcome::created:
        break;
    }
    const bool replayed = result.outcome == Outcome::replayed;
    log_event(spdlog::level::info, {{"event", replayed ? "reversal_replayed" : "reversal_created"},
                                    {"reversal_id", result.reversal.id},
                                    {"transfer_id", transfer_id},
                                    {"idempotency_key", key}});
    if (replayed) res.set_header("Idempotent-Replayed", "true");
    app::json_answer(res, replayed ? 200 : 201, to_text(to_json(result.reversal)));
  }

  const Config& config_;
  Transfers transfers_;
  Reversals reversals_;
  std::atomic<int> drops_left_;
  UuidV7Generator ids_;
};

int run(const Config& config) {
  configure_json_logging(config.log_level);
  const app::ListenAddress address = app::parse_listen(config.listen);
  auto db = db::Database::open(config.db);
  Partner partner(config, *db);
  partner.create_tables();
  http::Server server;
  http::limit_request_bodies(server, http::kDefaultBodyLimit, nullptr, http::Bodies::json);
  partner.routes(server);
  const int port = app::bind_and_announce(server, address);
  app::StopOnSignal stop(server, port);
  server.listen_after_bind();
  return 0;
}

}  // namespace
}  // namespace webhooks::partner

int main(int argc, char** argv) {
  webhooks::app::tune_malloc();
  webhooks::app::block_stop_signals();
  webhooks::partner::Config config;
  CLI::App app{
      "payout-partner: a fake payout partner with idempotent POST /transfers and "
      "POST /transfers/{id}/reversals"};
  app.add_option("--listen", config.listen, "HOST:PORT to listen on; port 0 picks a free port")
      ->check(webhooks::app::listen_address())
      ->capture_default_str();
  app.add_option("--db", config.db, "SQLite path or postgres:// URL")->capture_default_str();
  app.add_flag("--ignore-idempotency-key", config.ignore_idempotency_key,
               "create a new transfer for every request, whatever its X-Idempotency-Key "
               "(reversals stay deduplicated)");
  app.add_option("--drop-after-commit", config.drop_after_commit,
                 "close the connection without answering after committing the next N transfers")
      ->check(webhooks::app::count(0))
      ->capture_default_str();
  CLI::Option* delay = webhooks::app::add_duration(
      app, "--delay", config.delay_ms, webhooks::app::StoreAs::milliseconds,
      "wait this long before handling each transfer", webhooks::app::Zero::allowed);
  webhooks::app::add_deprecated_alias(app, delay, "--delay-ms",
                                      webhooks::app::OldValue::milliseconds,
                                      webhooks::app::Zero::allowed);
  app.add_option("--log-level", config.log_level, "debug, info, warn or error")
      ->transform(webhooks::app::log_levels())
      ->capture_default_str();
  if (const auto exit_code = webhooks::app::parse_command_line(app, argc, argv)) {
    return *exit_code;
  }
  try {
    return webhooks::partner::run(config);
  } catch (const std::exception& e) {
    std::cerr << "payout-partner: " << e.what() << std::endl;
    return 1;
  }
}
