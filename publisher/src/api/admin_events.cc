// The /v1/events routes: ingest, listing, one event with its tasks, attempts, replay.
#include <httplib.h>

#include "api/admin_api.h"
#include "api/admin_json.h"
#include "webhooks/error.h"
#include "webhooks/http_server.h"
#include "webhooks/log.h"
#include "webhooks/rfc3339.h"

namespace webhooks::publisher {
namespace {

using detail::answer;
using detail::fail;
using nlohmann::json;

std::optional<std::string_view> header(const httplib::Request& req, const char* name) {
  const auto it = req.headers.find(name);
  if (it == req.headers.end()) return std::nullopt;
  return std::string_view(it->second);
}

// Every field `name` of `req` joined with "," (RFC 9110, section 5.3: several fields of a list are
// one list), or "" when there is none.
std::string joined_fields(const httplib::Request& req, const char* name) {
  std::string out;
  const auto [first, last] = req.headers.equal_range(name);
  for (auto it = first; it != last; ++it) {
    if (!out.empty()) out.push_back(',');
    out.append(it->second);
  }
  return out;
}

// POST /v1/events: the ingest's answer, its headers and body as they are.
void ingest_event(Ingest& ingest, idempotency::Guard& guard, const httplib::Request& req,
                  httplib::Response& res) {
  // Two traceparent fields make it invalid (W3C Trace Context, "traceparent Header"): a new
  // trace is started, as for any invalid one.
  const std::string_view traceparent = req.get_header_value_count("traceparent") == 1
                                           ? header(req, "traceparent").value_or("")
                                           : std::string_view();
  // Several tracestate fields are one list (W3C Trace Context, "tracestate Header").
  idempotency::Response out = ingest.handle(guard, header(req, "Idempotency-Key"), req.body,
                                            traceparent, joined_fields(req, "tracestate"));
  res.status = out.status;
  for (const auto& [name, value] : out.headers) res.set_header(name, value);
  http::set_json_body(res, std::move(out.body));
}

// The query of GET /v1/events (merchant_id, type, state, since, until, q, cursor, limit);
// std::nullopt after answering 400.
std::optional<EventQuery> read_query(const httplib::Request& req, httplib::Response& res) {
  EventQuery query;
  query.merchant_id = req.get_param_value("merchant_id");
  query.type = req.get_param_value("type");
  query.q = req.get_param_value("q");
  query.cursor = req.get_param_value("cursor");
  if (req.has_param("state")) {
    query.state = parse_task_state(req.get_param_value("state"));
    if (!query.state) {
      fail(res, 400, "invalid_request",
           "state must be one of pending, delivering, succeeded, dead");
      return std::nullopt;
    }
  }
  if (!detail::time_param(req, "since", query.since, res) ||
      !detail::time_param(req, "until", query.until, res) ||
      !detail::limit_param(req, query.limit, res)) {
    return std::nullopt;
  }
  return query;
}

// GET /v1/events: a page of the events the query selects, their data byte for byte, each with
// its tasks counted by state, and the cursor of the next page (null on the last).
void list_events(Store& store, const httplib::Request& req, httplib::Response& res) {
  const std::optional<EventQuery> query = read_query(req, res);
  if (!query) return;
  EventPage page;
  try {
    page = store.list_event_page(*query);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::invalid_argument) throw;
    return fail(res, 400, "invalid_request", e.what());
  }
  json list = json::array();
  detail::RawJson raw;
  for (const Event& e : page.events) {
    json item = detail::event_json(e, raw);
    json states = json::object();
    const auto counts = page.task_states.find(e.event_id);
    if (counts != page.task_states.end()) {
      for (const auto& [state, n] : counts->second) states[std::string(to_string(state))] = n;
    }
    item["task_states"] = states;
    list.push_back(std::move(item));
  }
  answer(res, 200,
         {{"events", list},
          {"next_cursor", page.next_cursor.empty() ? json() : json(page.next_cursor)}},
         &raw);
}

// GET /v1/events/{id}: the event with its tasks.
void get_event(Store& store, const httplib::Request& req, httplib::Response& res) {
  const auto event = store.find_event(req.matches[1]);
  if (!event) return fail(res, 404, "not_found", "no such event");
  detail::RawJson raw;
  json out = detail::event_json(*event, raw);
  json tasks = json::array();
  for (const Task& t : store.tasks_of_event(event->event_id)) tasks.push_back(detail::task_json(t));
  out["tasks"] = tasks;
  answer(res, 200, out, &raw);
}

// GET /v1/events/{id}/attempts: the event's delivery attempts.
void list_attempts(Store& store, const httplib::Request& req, httplib::Response& res) {
  const auto event = store.find_event(req.matches[1]);
  if (!event) return fail(res, 404, "not_found", "no such event");
  json list = json::array();
  for (const DeliveryAttempt& a : store.attempts_of_event(event->event_id)) {
    list.push_back(detail::attempt_json(a));
  }
  answer(res, 200, {{"event_id", event->event_id}, {"attempts", list}});
}

// POST /v1/events/{id}/replay: the event's tasks (or one endpoint's) delivered again (202), within
// `max_age` of its creation; `wake` (if set) when a task was queued.
void replay_event(Store& store, const Clock& clock, std::chrono::milliseconds max_age,
                  const std::function<void()>& wake, const httplib::Request& req,
                  httplib::Response& res) {
  const auto body = detail::json_body(req, res);
  if (!body) return;
  const auto event = store.find_event(req.matches[1]);
  if (!event) return fail(res, 404, "not_found", "no such event");
  const UnixMillis now = clock.now_ms();
  if (now - event->created_at > max_age.count()) {
    return fail(res, 422, "replay_too_old",
                "the event is older than the replay window (--replay-max-age); receivers may "
                "no longer recognise it as a duplicate");
  }
  const std::string endpoint_id = body->value("endpoint_id", "");
  const int tasks = store.replay(event->event_id, endpoint_id, now);
  if (tasks == 0 && !endpoint_id.empty()) {
    return fail(res, 404, "not_found", "the event has no replayable task for that endpoint");
  }
  log_event(spdlog::level::info, {{"event", "event_replayed"},
                                  {"event_id", event->event_id},
                                  {"endpoint_id", endpoint_id},
                                  {"tasks", tasks}});
  if (tasks > 0 && wake) wake();
  answer(res, 202, {{"event_id", event->event_id}, {"tasks", tasks}});
}

}  // namespace

void AdminApi::mount_events(http::Server& server) {
  using Request = httplib::Request;
  using Response = httplib::Response;
  server.Post("/v1/events", [this](const Request& req, Response& res) {
    ingest_event(ingest_, guard_, req, res);
  });
  server.Get("/v1/events",
             [this](const Request& req, Response& res) { list_events(store_, req, res); });
  server.Get(R"(/v1/events/([^/]+))",
             [this](const Request& req, Response& res) { get_event(store_, req, res); });
  server.Get(R"(/v1/events/([^/]+)/attempts)",
             [this](const Request& req, Response& res) { list_attempts(store_, req, res); });
  server.Post(R"(/v1/events/([^/]+)/replay)", audited([this](const Request& req, Response& res) {
                replay_event(store_, clock_, options_.replay_max_age, wake_, req, res);
              }));
}

}  // namespace webhooks::publisher
