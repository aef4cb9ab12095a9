// The publisher console's routes (docs/console.md): GET /console, /console/endpoints,
// /console/endpoints/{id}, /console/events, /console/events/{id}, each behind the session, and
// the sign-in routes and assets of webhooks::console. Pages only read; actions are the page
// script's calls to the admin API.
#include <httplib.h>

#include "api/admin_api.h"
#include "console/console_view.h"
#include "webhooks/console/page.h"
#include "webhooks/error.h"

namespace webhooks::publisher {

using Request = httplib::Request;
using Response = httplib::Response;

namespace {
constexpr const char* kTitle = "Publisher console";
}  // namespace

void detail::send_console_page(Response& res, const console::Session& session,
                               const std::string& nav, std::string title, std::string body,
                               int status) {
  console::Page page;
  page.console_title = kTitle;
  page.title = std::move(title);
  page.nav = {{"nav-overview", "/console", "Overview"},
              {"nav-endpoints", "/console/endpoints", "Endpoints"},
              {"nav-events", "/console/events", "Events"},
              {"nav-audit", "/console/audit", "Audit log"}};
  page.active_nav = nav;
  page.csrf_token = session.csrf_token;
  page.body = std::move(body);
  console::send_html(res, status, console::render_page(page));
}

void detail::console_time_filters(const Request& req, std::optional<UnixMillis>& since,
                                  std::optional<UnixMillis>& until, std::string& error) {
  for (const auto& [name, into] : {std::pair{"since", &since}, std::pair{"until", &until}}) {
    const std::string text = req.get_param_value(name);
    if (text.empty()) continue;
    *into = console_parse_time(text);
    if (!*into) error = std::string(name) + " must be an RFC 3339 time, e.g. 2026-01-31T12:00:00Z";
  }
}

namespace {
using detail::send_console_page;

void not_found(Response& res, const console::Session& session, const std::string& nav,
               const std::string& what) {
  send_console_page(res, session, nav, "Not found",
                    "<p id=\"not-found\">No such " + what + ".</p>\n", 404);
}

// The events page's filter from the query; `error` says which value was refused.
detail::EventFilter event_filter(const Request& req, std::string& error) {
  detail::EventFilter f;
  f.merchant_id = req.get_param_value("merchant_id");
  f.type = req.get_param_value("type");
  f.state = req.get_param_value("state");
  f.q = req.get_param_value("q");
  f.cursor = req.get_param_value("cursor");
  detail::console_time_filters(req, f.since, f.until, error);
  return f;
}

}  // namespace

bool AdminApi::can_act(const console::Session& session) const {
  const Principal* principal = principals_.by_name(session.principal);
  return principal != nullptr && principal->role == Role::admin;
}

void AdminApi::mount_console_pages(http::Server& server) {
  sessions_.mount(server, kTitle);
  server.Get("/", [](const Request&, Response& res) { console::redirect(res, "/console"); });
  server.Get("/console", [this](const Request& req, Response& res) {
    const auto session = sessions_.require(req, res);
    if (!session) return;
    const detail::OverviewFigures figures = detail::console_overview(overview_.read());
    send_console_page(res, *session, "nav-overview", "Overview",
                      detail::overview_body(figures, clock_.now_ms()));
  });
  server.Get("/console/endpoints", [this](const Request& req, Response& res) {
    const auto session = sessions_.require(req, res);
    if (!session) return;
    const std::vector<Endpoint> endpoints = store_.list_endpoints("");
    std::map<std::string, EndpointStats> stats;
    for (const Endpoint& e : endpoints) stats[e.id] = store_.endpoint_stats(e.id);
    send_console_page(res, *session, "nav-endpoints", "Endpoints",
                      detail::endpoints_body(endpoints, stats));
  });
  server.Get(R"(/console/endpoints/([^/]+))", [this](const Request& req, Response& res) {
    const auto session = sessions_.require(req, res);
    if (!session) return;
    const std::optional<Endpoint> endpoint = store_.find_endpoint(req.matches[1]);
    if (!endpoint) return not_found(res, *session, "nav-endpoints", "endpoint");
    send_console_page(
        res, *session, "nav-endpoints", "Endpoint " + endpoint->id,
        detail::endpoint_body(*endpoint, store_.endpoint_stats(endpoint->id), can_act(*session)));
  });
  mount_console_events(server);
  mount_audit(server);
}

void AdminApi::mount_console_events(http::Server& server) {
  server.Get("/console/events", [this](const Request& req, Response& res) {
    const auto session = sessions_.require(req, res);
    if (!session) return;
    std::string error;
    const detail::EventFilter filter = event_filter(req, error);
    EventPage rows;
    if (error.empty()) {
      try {
        rows = detail::console_events(store_, filter);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::invalid_argument) throw;
        error = e.what();
      }
    }
    send_console_page(res, *session, "nav-events", "Events",
                      detail::events_body(filter, rows, error), error.empty() ? 200 : 400);
  });
  server.Get(R"(/console/events/([^/]+))", [this](const Request& req, Response& res) {
    const auto session = sessions_.require(req, res);
    if (!session) return;
    const std::optional<Event> event = store_.find_event(req.matches[1]);
    if (!event) return not_found(res, *session, "nav-events", "event");
    send_console_page(
        res, *session, "nav-events", "Event " + event->event_id,
        detail::event_body(*event, store_.tasks_of_event(event->event_id),
                           store_.attempts_of_event(event->event_id), can_act(*session)));
  });
}

}  // namespace webhooks::publisher
