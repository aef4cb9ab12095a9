// The audit log's routes (docs/security.md, "The audit log"): recording each state-changing
// request (AdminApi::audited) and sign-in, GET /v1/audit and the console's /console/audit.
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

#include "api/admin_api.h"
#include "api/admin_json.h"
#include "api/audit_log.h"
#include "console/console_view.h"
#include "webhooks/console/html.h"
#include "webhooks/console/page.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/http.h"
#include "webhooks/log.h"
#include "webhooks/rfc3339.h"

namespace webhooks::publisher {
namespace {

using json = nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;

// The error code of a JSON error answer ({"error":{"code"}}), or "" (a success, or no JSON).
std::string error_code(const Response& res) {
  if (res.status < 400) return "";
  const json body = json::parse(res.body, nullptr, false);
  if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) return "";
  return body["error"].value("code", "");
}

// The id of the endpoint a create answered 201 with, or "".
std::string created_id(const Response& res) {
  if (res.status != 201) return "";
  const json body = json::parse(res.body, nullptr, false);
  return body.is_object() && body.contains("id") && body["id"].is_string()
             ? body["id"].get<std::string>()
             : "";
}

// The recorded routes: method, path, action. The path's first group is the target.
struct AuditedRoute {
  std::string_view method;
  std::regex path;
  std::string_view action;
};

const std::vector<AuditedRoute>& audited_routes() {
  static const std::vector<AuditedRoute> routes = [] {
    std::vector<AuditedRoute> out;
    const auto add = [&](std::string_view method, const char* path, std::string_view action) {
      out.push_back({method, std::regex(path), action});
    };
    add("POST", R"(/v1/endpoints)", "endpoint.create");
    add("PATCH", R"(/v1/endpoints/([^/]+))", "endpoint.update");
    add("DELETE", R"(/v1/endpoints/([^/]+))", "endpoint.delete");
    add("POST", R"(/v1/endpoints/([^/]+)/enable)", "endpoint.enable");
    add("POST", R"(/v1/endpoints/([^/]+)/disable)", "endpoint.disable");
    add("POST", R"(/v1/endpoints/([^/]+)/rotate-secret)", "endpoint.rotate_secret");
    add("POST", R"(/v1/endpoints/([^/]+)/recover)", "endpoint.recover");
    add("POST", R"(/v1/endpoints/([^/]+)/replay-missing)", "endpoint.replay_missing");
    add("POST", R"(/v1/events/([^/]+)/replay)", "event.replay");
    return out;
  }();
  return routes;
}

bool known_action(std::string_view action) {
  for (const std::string_view a : kAuditActions) {
    if (a == action) return true;
  }
  return false;
}

std::string action_list() {
  std::string out;
  for (const std::string_view a : kAuditActions) out += (out.empty() ? "" : ", ") + std::string(a);
  return out;
}

json entry_json(const AuditEntry& e) {
  return {{"id", e.id},           {"at", format_rfc3339(e.at)}, {"actor", e.actor},
          {"role", e.role},       {"action", e.action},         {"target", e.target},
          {"outcome", e.outcome}, {"status", e.status},         {"detail", e.detail},
          {"client", e.client}};
}

// The filters of GET /v1/audit and /console/audit (actor, action, target, since, until, cursor);
// `error` says which value was refused.
AuditQuery audit_query(const Request& req, std::string& error) {
  AuditQuery q;
  for (const char* name : {"actor", "action", "target", "since", "until", "cursor"}) {
    if (req.get_param_value_count(name) > 1) {
      error = std::string(name) + " is given more than once; give it once";
      return q;
    }
  }
  q.actor = req.get_param_value("actor");
  q.action = req.get_param_value("action");
  q.target = req.get_param_value("target");
  q.cursor = req.get_param_value("cursor");
  if (!q.action.empty() && !known_action(q.action)) {
    error = "action must be one of " + action_list();
  }
  return q;
}

// --- The console page ---

std::string audit_form(const AuditQuery& q, const std::string& since, const std::string& until) {
  std::string out = "<form id=\"filters\" method=\"get\" action=\"/console/audit\">\n";
  out += detail::console_input("actor", "Actor", q.actor);
  out += detail::console_input("action", "Action", q.action, "endpoint.update, console.sign_in");
  out += detail::console_input("target", "Target", q.target, "endpoint or event id");
  out += detail::console_input("since", "Since", since, "2026-01-31T12:00:00Z");
  out += detail::console_input("until", "Until", until, "2026-01-31T13:00:00Z");
  return out + "<button id=\"apply-filters\" type=\"submit\">Filter</button>\n</form>\n";
}

std::string target_link(const AuditEntry& e) {
  if (e.target.empty()) return "";
  const char* base = e.action.starts_with("event.") ? "/console/events/" : "/console/endpoints/";
  return "<a href=\"" + console::escape_html(base + console::url_encode(e.target)) + "\">" +
         console::escape_html(e.target) + "</a>";
}

std::string audit_body(const AuditQuery& q, const AuditPage& page, const std::string& error) {
  const std::string since = q.since ? detail::console_time(*q.since) : "";
  const std::string until = q.until ? detail::console_time(*q.until) : "";
  std::string out = audit_form(q, since, until);
  if (!error.empty()) {
    out += "<p id=\"filter-error\" class=\"error\">" + console::escape_html(error) + "</p>\n";
  }
  out +=
      "<table id=\"audit\"><tr><th>Time</th><th>Actor</th><th>Action</th><th>Target</th>"
      "<th>Outcome</th><th>Status</th><th>Detail</th><th>Client</th></tr>\n";
  for (const AuditEntry& e : page.entries) {
    out += "<tr data-audit-id=\"" + std::to_string(e.id) + "\">" +
           detail::console_cell("at", detail::console_time(e.at)) +
           detail::console_cell("actor", e.actor) + detail::console_cell("action", e.action) +
           "<td class=\"target\">" + target_link(e) + "</td>" +
           detail::console_cell("outcome", e.outcome) +
           detail::console_cell("status", std::to_string(e.status)) +
           detail::console_cell("detail", e.detail) + detail::console_cell("client", e.client) +
           "</tr>\n";
  }
  out += "</table>\n";
  if (page.entries.empty()) out += "<p id=\"no-entries\">No entries match.</p>\n";
  if (!page.next_cursor.empty()) {
    out += detail::console_next_link("/console/audit",
                                     {{"actor", q.actor},
                                      {"action", q.action},
                                      {"target", q.target},
                                      {"since", since},
                                      {"until", until}},
                                     page.next_cursor, "Older entries");
  }
  return out;
}

}  // namespace

std::string audit_action_of(std::string_view method, const std::string& path) {
  for (const AuditedRoute& r : audited_routes()) {
    if (r.method == method && std::regex_match(path, r.path)) return std::string(r.action);
  }
  return "";
}

std::string audit_target_of(const std::string& path) {
  std::smatch m;
  for (const AuditedRoute& r : audited_routes()) {
    if (std::regex_match(path, m, r.path) && m.size() > 1) return m[1].str();
  }
  return "";
}

AdminApi::~AdminApi() = default;

const Principal* AdminApi::principal_of(const Request& req) const {
  if (const Principal* p = principals_.by_token(http::bearer_token(req))) return p;
  std::string name;
  if (sessions_.authorize_api(req, &name) == console::ApiSession::ok) {
    return principals_.by_name(name);
  }
  return nullptr;
}

void AdminApi::record_audit(const Request& req, AuditEntry entry) {
  entry.at = clock_.now_ms();
  if (entry.actor.empty()) {
    std::int64_t left_out = 0;
    if (!unauthenticated_budget_->admit(entry.at, left_out)) return;
    if (left_out > 0) {
      entry.detail += "; " + std::to_string(left_out) + " earlier not recorded (over " +
                      std::to_string(kUnauthenticatedEntriesPerMinute) + " a minute)";
    }
  }
  entry.client = req.remote_addr;
  entry.outcome = std::string(audit_outcome(entry.status));
  if (!entry.actor.empty() && entry.role.empty()) {
    const Principal* p = principals_.by_name(entry.actor);
    if (p != nullptr) entry.role = std::string(to_string(p->role));
  }
  try {
    audit_log_->record(entry);
  } catch (const std::exception& e) {
    // The action happened (or was refused) all the same: the log keeps what the table could not.
    log_event(spdlog::level::err, {{"event", "audit_write_failed"},
                                   {"error", e.what()},
                                   {"actor", entry.actor},
                                   {"action", entry.action},
                                   {"target", entry.target},
                                   {"status", entry.status},
                                   {"detail", entry.detail},
                                   {"client", entry.client}});
  }
}

httplib::Server::Handler AdminApi::audited(httplib::Server::Handler handler) {
  return [this, handler = std::move(handler)](const Request& req, Response& res) {
    AuditEntry entry;
    entry.action = audit_action_of(req.method, req.path);
    if (const Principal* p = principal_of(req)) {
      entry.actor = p->name;
      entry.role = std::string(to_string(p->role));
    }
    try {
      handler(req, res);
    } catch (...) {
      // Recorded as the exception handler will answer it (idempotency::answer_exception).
      const idempotency::ExceptionAnswer answer =
          idempotency::exception_answer(std::current_exception());
      entry.status = answer.response.status;
      entry.detail = std::string(answer.code);
      entry.target = req.matches.size() > 1 ? req.matches[1].str() : "";
      record_audit(req, std::move(entry));
      throw;
    }
    entry.status = res.status == -1 ? 200 : res.status;  // cpp-httplib's default: 200
    entry.detail = error_code(res);
    entry.target = req.matches.size() > 1 ? req.matches[1].str() : created_id(res);
    record_audit(req, std::move(entry));
  };
}

void AdminApi::mount_audit(http::Server& server) {
  // GET /v1/audit: a page of entries, newest first, and the cursor of the next (null on the last).
  server.Get("/v1/audit", [this](const Request& req, Response& res) {
    std::string error;
    AuditQuery q = audit_query(req, error);
    if (!error.empty()) return detail::fail(res, 400, "invalid_request", error);
    if (!detail::time_param(req, "since", q.since, res) ||
        !detail::time_param(req, "until", q.until, res) ||
        !detail::limit_param(req, q.limit, res)) {
      return;
    }
    AuditPage page;
    try {
      page = audit_log_->list(q);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::invalid_argument) throw;
      return detail::fail(res, 400, "invalid_request", e.what());
    }
    json entries = json::array();
    for (const AuditEntry& e : page.entries) entries.push_back(entry_json(e));
    detail::answer(res, 200,
                   {{"entries", entries},
                    {"next_cursor", page.next_cursor.empty() ? json() : json(page.next_cursor)}});
  });
  server.Get("/console/audit", [this](const Request& req, Response& res) {
    const auto session = sessions_.require(req, res);
    if (!session) return;
    std::string error;
    AuditQuery q = audit_query(req, error);
    q.limit = detail::kEventsPerPage;
    detail::console_time_filters(req, q.since, q.until, error);
    AuditPage page;
    if (error.empty()) {
      try {
        page = audit_log_->list(q);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::invalid_argument) throw;
        error = e.what();
      }
    }
    detail::send_console_page(res, *session, "nav-audit", "Audit log", audit_body(q, page, error),
                              error.empty() ? 200 : 400);
  });
}

}  // namespace webhooks::publisher
