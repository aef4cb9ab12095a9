// webhooks replay / events / attempts / audit: the publisher's admin API from the terminal, and
// re-signing captured deliveries (`webhooks listen --capture`).
#include <httplib.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "admin/publisher_api.h"
#include "capture.h"
#include "cli.h"
#include "output.h"
#include "webhooks/clock.h"
#include "webhooks/error.h"
#include "webhooks/json_parse.h"
#include "webhooks/rfc3339.h"
#include "webhooks/signer.h"
#include "webhooks/uuid.h"
#include "webhooks/wire.h"

namespace webhooks::cli {

void add_publisher_options(CLI::App* cmd, Publisher& p, bool token_required) {
  cmd->add_option("--publisher-url", p.url, "the publisher's base URL, http(s)://HOST:PORT")
      ->envname("WEBHOOKS_PUBLISHER_URL")
      ->check(app::server_url(true))
      ->capture_default_str();
  // Every route these commands call needs a token: without one, a usage error (exit 2) before
  // anything is sent (a request without it is a 401 counted against this address).
  app::add_secret_option(*cmd,
                         {"--admin-token", "WEBHOOKS_ADMIN_TOKEN",
                          "the publisher's admin (or, for reads, viewer) bearer token",
                          app::bearer_token(), token_required},
                         p.token);
}

void require_token(const Publisher& p) {
  if (p.token.empty()) {
    throw UsageError(
        "--admin-token is required: give --admin-token, --admin-token-file or "
        "WEBHOOKS_ADMIN_TOKEN (or WEBHOOKS_ADMIN_TOKEN_FILE)");
  }
}

ApiAnswer request(const Publisher& p, const std::string& method, const std::string& path,
                  const std::string& body, const httplib::Headers& headers) {
  constexpr std::chrono::seconds kReadTimeout{30};
  httplib::Client client(p.url);
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(kReadTimeout);
  if (!p.token.empty()) client.set_bearer_token_auth(p.token);
  const auto res = method == "GET"      ? client.Get(path, headers)
                   : method == "DELETE" ? client.Delete(path, headers)
                   : method == "PATCH"  ? client.Patch(path, headers, body, "application/json")
                                        : client.Post(path, headers, body, "application/json");
  if (!res) {
    std::cerr << "webhooks: no answer from the publisher at " << p.url << ": "
              << no_answer(res.error(), kReadTimeout) << "\n";
    if (res.error() == httplib::Error::Connection) {
      std::cerr << "webhooks: is webhooks-publisherd running there? (--publisher-url, "
                   "WEBHOOKS_PUBLISHER_URL)\n";
    }
    return {};
  }
  if (res->status < 200 || res->status >= 300) {
    std::cerr << "webhooks: the publisher answered " << res->status << ": " << res->body << "\n";
    return {res->status, res->headers, {}};
  }
  try {
    return {res->status, res->headers, parse_ordered_json(res->body.empty() ? "{}" : res->body)};
  } catch (const Error&) {
    std::cerr << "webhooks: the publisher's answer is not JSON\n";
    return {};
  }
}

std::optional<nlohmann::ordered_json> call(const Publisher& p, const std::string& method,
                                           const std::string& path, const std::string& body) {
  ApiAnswer answer = request(p, method, path, body);
  if (!answer.ok()) return std::nullopt;
  return std::move(answer.body);
}

namespace {

// An RFC 3339 time, checked before anything is sent (the API would answer 400).
CLI::Validator rfc3339_time() {
  return CLI::Validator(
      [](std::string& value) {
        return parse_rfc3339(value) ? std::string()
                                    : "must be an RFC 3339 time, e.g. 2026-12-04T13:00:00Z";
      },
      "TIME");
}

// Re-signs each captured delivery with a fresh timestamp, the same webhook-id and a new delivery
// id, and posts it to `url`. Returns how many were answered 2xx.
int replay_capture(const std::string& file, const std::string& url, const std::string& secret_text,
                   int& total) {
  const Secret secret = Secret::parse(secret_text);
  const Signer signer(secret);
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) throw UsageError("--url must start with http:// or https://");
  const std::vector<Captured> deliveries = parse_capture(read_input(file), file);
  const std::size_t slash = url.find('/', scheme + 3);
  httplib::Client client(slash == std::string::npos ? url : url.substr(0, slash));
  const std::string path = slash == std::string::npos ? "/" : url.substr(slash);
  client.set_tcp_nodelay(true);
  UuidV7Generator ids(system_clock());
  int ok = 0;
  for (const Captured& delivery : deliveries) {
    ++total;
    const std::int64_t ts = system_clock().now_seconds();
    httplib::Headers headers = {
        {std::string(kHeaderId), delivery.id},
        {std::string(kHeaderTimestamp), std::to_string(ts)},
        {std::string(kHeaderSignature), signer.sign(delivery.id, ts, delivery.body)},
        {std::string(kHeaderDeliveryId), ids.next()}};
    if (delivery.type) headers.emplace(std::string(kHeaderEventType), *delivery.type);
    const auto res = client.Post(path, headers, delivery.body, "application/json");
    std::cout << delivery.id << "  "
              << (res ? std::to_string(res->status)
                      : "no answer: " + no_answer(res.error(), std::chrono::seconds(300)))
              << "\n";
    if (res && res->status >= 200 && res->status < 300) ++ok;
  }
  return ok;
}

// Replays one event (to all its endpoints or one), when --event is given.
int replay_event(const Publisher& p, const std::string& event, const std::string& endpoint,
                 bool json) {
  const nlohmann::json body =
      endpoint.empty() ? nlohmann::json::object() : nlohmann::json{{"endpoint_id", endpoint}};
  const auto res = call(p, "POST", "/v1/events/" + event + "/replay", body.dump());
  if (!res) return kFailed;
  print_object(*res, json);
  return kOk;
}

// Recovers an endpoint's dead tasks since an RFC 3339 time, or (`missing`) creates the tasks it
// never had for its merchant's events since then.
int recover_endpoint(const Publisher& p, const std::string& endpoint, const std::string& since,
                     bool missing, bool json) {
  const auto res =
      call(p, "POST", "/v1/endpoints/" + endpoint + (missing ? "/replay-missing" : "/recover"),
           nlohmann::json{{"since", since}}.dump());
  if (!res) return kFailed;
  print_object(*res, json);
  return kOk;
}

struct ReplayArgs {
  Publisher publisher;
  std::string event, endpoint, since, capture, url, secret;
  bool missing = false;
  bool json = false;
};

int run_replay(const ReplayArgs& a) {
  if (!a.capture.empty()) {
    if (a.url.empty() || a.secret.empty()) throw UsageError("--capture needs --url and --secret");
    int total = 0;
    const int ok = replay_capture(a.capture, a.url, a.secret, total);
    std::cout << ok << " of " << total << " deliveries accepted\n";
    return ok == total ? kOk : kFailed;
  }
  require_token(a.publisher);
  if (a.missing && (!a.event.empty() || a.endpoint.empty() || a.since.empty())) {
    throw UsageError("--missing needs --endpoint ID --since TIME (and no --event)");
  }
  if (!a.event.empty()) return replay_event(a.publisher, a.event, a.endpoint, a.json);
  if (!a.endpoint.empty() && !a.since.empty()) {
    return recover_endpoint(a.publisher, a.endpoint, a.since, a.missing, a.json);
  }
  throw UsageError(
      "replay needs --event ID [--endpoint ID], --endpoint ID --since TIME [--missing], or "
      "--capture FILE --url U --secret S");
}

// Each subcommand has its own Publisher, so its own --admin-token (--admin-token-file,
// WEBHOOKS_ADMIN_TOKEN), read only for the subcommand that runs.
void add_replay(CLI::App& app, Action& action) {
  auto a = std::make_shared<ReplayArgs>();
  CLI::App* replay = app.add_subcommand(
      "replay",
      "Replay an event, recover an endpoint's dead tasks, replay the events it missed, or "
      "re-send captured deliveries");
  add_publisher_options(replay, a->publisher, false);  // --capture needs no token
  replay->add_option("--event", a->event, "event id to replay");
  replay->add_option("--endpoint", a->endpoint, "endpoint id (with --event: only that endpoint)");
  replay
      ->add_option("--since", a->since,
                   "with --endpoint: recover dead tasks since this RFC 3339 time")
      ->check(rfc3339_time());
  replay->add_flag("--missing", a->missing,
                   "with --endpoint and --since: create the tasks the endpoint never had for "
                   "its merchant's events since then that its filter selects (accepted while it "
                   "was disabled or before it existed)");
  replay->add_option("--capture", a->capture,
                     "JSON-lines file written by `webhooks listen --capture`; exit 0 when every "
                     "delivery was accepted, 1 when one was not, 2 (FILE:LINE: the problem, "
                     "nothing sent) when a line is malformed");
  replay->add_option("--url", a->url, "with --capture: where to send");
  replay->add_flag("--json", a->json, "print the API's JSON instead of name: value lines");
  app::add_secret_option(*replay,
                         {"--secret", "WEBHOOKS_SECRET",
                          "with --capture: the secret to re-sign with", app::signing_secret()},
                         a->secret);
  replay->callback([a, &action] { action = [a] { return run_replay(*a); }; });
}

struct EventsArgs {
  Publisher publisher;
  std::string merchant, type, state, since, until, q, cursor;
  int limit = 50;
  bool json = false;
};

// The options of a paged list, in this order: --cursor, --limit (1 to 1000), --json.
void add_page_options(CLI::App* cmd, std::string& cursor, int& limit, bool& json) {
  cmd->add_option("--cursor", cursor,
                  "the page after the one that printed this cursor (same filters)");
  cmd->add_option("--limit", limit, "at most this many (the API's limit: 1 to 1000)")
      ->check(app::count(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--json", json, "print the API's JSON instead of a table");
}

// GET `path`?limit=LIMIT&name=value… (the empty values left out); prints the answer's `list` with
// `columns` (or its JSON), and the cursor of the next page.
int list_page(const Publisher& publisher, std::string path, int limit,
              const std::vector<std::pair<const char*, std::string>>& params, const char* list,
              const std::vector<std::string>& columns, bool json) {
  path += "?limit=" + std::to_string(limit);
  for (const auto& [name, value] : params) {
    if (!value.empty()) {
      path += "&" + std::string(name) + "=" + httplib::detail::encode_query_param(value);
    }
  }
  const auto res = call(publisher, "GET", path);
  if (!res) return kFailed;
  print_list(*res, list, columns, json);
  const auto next = res->find("next_cursor");
  if (!json && next != res->end() && next->is_string()) {
    std::cout << "more: --cursor " << next->get<std::string>() << "\n";
  }
  return kOk;
}

int run_events(const EventsArgs& a) {
  return list_page(a.publisher, "/v1/events", a.limit,
                   {{"merchant_id", a.merchant},
                    {"type", a.type},
                    {"state", a.state},
                    {"since", a.since},
                    {"until", a.until},
                    {"q", a.q},
                    {"cursor", a.cursor}},
                   "events", {"event_id", "merchant_id", "type", "created_at", "task_states"},
                   a.json);
}

void add_events(CLI::App& app, Action& action) {
  auto a = std::make_shared<EventsArgs>();
  CLI::App* events = app.add_subcommand("events", "List events from the publisher");
  add_publisher_options(events, a->publisher);
  events->add_option("--merchant", a->merchant, "only this merchant_id");
  events->add_option("--type", a->type, "only this event type");
  events
      ->add_option("--state", a->state,
                   "only events with a task in this state (pending, delivering, succeeded, dead)")
      ->check(CLI::IsMember({"pending", "delivering", "succeeded", "dead"}));
  events->add_option("--since", a->since, "only events created since this RFC 3339 time")
      ->check(rfc3339_time());
  events->add_option("--until", a->until, "only events created before this RFC 3339 time")
      ->check(rfc3339_time());
  events->add_option("--q", a->q,
                     "only the event with this id, or ingested with this "
                     "Idempotency-Key (exact)");
  add_page_options(events, a->cursor, a->limit, a->json);
  events->callback([a, &action] { action = [a] { return run_events(*a); }; });
}

struct AttemptsArgs {
  Publisher publisher;
  std::string event;
  bool json = false;
};

int run_attempts(const AttemptsArgs& a) {
  const auto res = call(a.publisher, "GET", "/v1/events/" + a.event + "/attempts");
  if (!res) return kFailed;
  print_list(
      *res, "attempts",
      {"delivery_id", "endpoint_id", "started_at", "trigger", "status", "latency_ms", "error"},
      a.json);
  return kOk;
}

void add_attempts(CLI::App& app, Action& action) {
  auto a = std::make_shared<AttemptsArgs>();
  CLI::App* attempts = app.add_subcommand("attempts", "List an event's delivery attempts");
  add_publisher_options(attempts, a->publisher);
  attempts->add_option("--event", a->event, "event id")->required();
  attempts->add_flag("--json", a->json, "print the API's JSON instead of a table");
  attempts->callback([a, &action] { action = [a] { return run_attempts(*a); }; });
}

struct AuditArgs {
  Publisher publisher;
  std::string actor, action, target, since, until, cursor;
  int limit = 50;
  bool json = false;
};

void add_audit(CLI::App& app, Action& action) {
  auto a = std::make_shared<AuditArgs>();
  CLI::App* audit = app.add_subcommand(
      "audit", "List the publisher's audit log: who changed what, when, from where (newest first)");
  add_publisher_options(audit, a->publisher);
  audit->add_option("--actor", a->actor, "only this token's name");
  audit->add_option("--action", a->action, "only this action")
      ->check(CLI::IsMember({"endpoint.create", "endpoint.update", "endpoint.enable",
                             "endpoint.disable", "endpoint.delete", "endpoint.rotate_secret",
                             "endpoint.recover", "endpoint.replay_missing", "event.replay",
                             "console.sign_in", "console.sign_out", "api.authenticate"}));
  audit->add_option("--target", a->target, "only actions on this endpoint or event id");
  audit->add_option("--since", a->since, "only entries recorded since this RFC 3339 time")
      ->check(rfc3339_time());
  audit->add_option("--until", a->until, "only entries recorded before this RFC 3339 time")
      ->check(rfc3339_time());
  add_page_options(audit, a->cursor, a->limit, a->json);
  audit->callback([a, &action] {
    action = [a] {
      return list_page(a->publisher, "/v1/audit", a->limit,
                       {{"actor", a->actor},
                        {"action", a->action},
                        {"target", a->target},
                        {"since", a->since},
                        {"until", a->until},
                        {"cursor", a->cursor}},
                       "entries",
                       {"at", "actor", "action", "target", "outcome", "status", "detail", "client"},
                       a->json);
    };
  });
}

}  // namespace

void add_admin(CLI::App& app, Action& action) {
  add_replay(app, action);
  add_events(app, action);
  add_attempts(app, action);
  add_audit(app, action);
}

}  // namespace webhooks::cli
