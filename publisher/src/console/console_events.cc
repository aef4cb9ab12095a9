// The console's events and event pages.
#include "console/console_view.h"
#include "delivery/trace_context.h"
#include "webhooks/console/html.h"

namespace webhooks::publisher::detail {
namespace {

using console::escape_html;
using console::url_encode;

std::string filter_form(const EventFilter& f, const std::string& since, const std::string& until) {
  std::string out = "<form id=\"filters\" method=\"get\" action=\"/console/events\">\n";
  out += console_input("merchant_id", "Merchant", f.merchant_id);
  out += console_input("type", "Type", f.type);
  out += console_input("state", "State", f.state, "pending, delivering, succeeded, dead");
  out += console_input("since", "Since", since, "2026-01-31T12:00:00Z");
  out += console_input("until", "Until", until, "2026-01-31T13:00:00Z");
  out += console_input("q", "Event id or idempotency key", f.q);
  return out + "<button id=\"apply-filters\" type=\"submit\">Filter</button>\n</form>\n";
}

std::string next_link(const EventFilter& f, const std::string& since, const std::string& until,
                      const std::string& cursor) {
  return console_next_link("/console/events",
                           {{"merchant_id", f.merchant_id},
                            {"type", f.type},
                            {"state", f.state},
                            {"since", since},
                            {"until", until},
                            {"q", f.q}},
                           cursor, "Older events");
}

}  // namespace

std::string events_body(const EventFilter& f, const EventPage& rows, const std::string& error) {
  const std::string since = f.since ? console_time(*f.since) : "";
  const std::string until = f.until ? console_time(*f.until) : "";
  std::string out = filter_form(f, since, until);
  if (!error.empty())
    out += "<p id=\"filter-error\" class=\"error\">" + escape_html(error) + "</p>\n";
  out +=
      "<table id=\"events\"><tr><th>Event</th><th>Type</th><th>Merchant</th><th>Created</th>"
      "<th>Tasks</th></tr>\n";
  for (const Event& e : rows.events) {
    const auto states = rows.task_states.find(e.event_id);
    out += "<tr data-event-id=\"" + escape_html(e.event_id) +
           "\"><td class=\"id\"><a href=\"/console/events/" + escape_html(url_encode(e.event_id)) +
           "\">" + escape_html(e.event_id) + "</a></td>" + console_cell("type", e.type) +
           console_cell("merchant", e.merchant_id) +
           console_cell("created", console_time(e.created_at)) +
           console_cell("states",
                        console_states(states == rows.task_states.end() ? std::map<TaskState, int>{}
                                                                        : states->second)) +
           "</tr>\n";
  }
  out += "</table>\n";
  if (rows.events.empty()) {
    out += rows.next_cursor.empty()
               ? "<p id=\"no-events\">No events match.</p>\n"
               : "<p id=\"no-events\">None of the tasks read for this page match; older ones may "
                 "(Older events).</p>\n";
  }
  if (!rows.next_cursor.empty()) out += next_link(f, since, until, rows.next_cursor);
  return out;
}

namespace {

// Why a task waits, or where its FIFO sequence went on without it.
std::string task_note(const Task& t) {
  if (t.parked) return "parked (endpoint disabled)";
  if (t.waiting) return "waiting (FIFO: behind an earlier event of its ordering key)";
  if (t.in_sequence && t.state == TaskState::dead) return "skipped (FIFO: the sequence went on)";
  return "";
}

std::string tasks_table(const std::vector<Task>& tasks) {
  std::string out =
      "<h2>Tasks</h2>\n<table id=\"tasks\"><tr><th>Task</th><th>Endpoint</th><th>State</th>"
      "<th>Parked</th><th>Attempts</th><th>Next attempt</th><th>Last status</th><th>Last "
      "error</th></tr>\n";
  for (const Task& t : tasks) {
    out +=
        "<tr data-task-id=\"" + std::to_string(t.id) + "\"><td>" + std::to_string(t.id) +
        "</td><td class=\"endpoint\"><a href=\"/console/endpoints/" +
        escape_html(url_encode(t.endpoint_id)) + "\">" + escape_html(t.endpoint_id) + "</a></td>" +
        console_cell("state", std::string(to_string(t.state))) +
        console_cell("parked", task_note(t)) +
        console_cell("attempts", std::to_string(t.attempts)) +
        console_cell("next", t.state == TaskState::pending ? console_time(t.next_attempt_at) : "") +
        console_cell("last-status", t.attempts > 0 ? console_status(t.last_status) : "") +
        console_cell("last-error", t.last_error) + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string attempts_table(const std::vector<DeliveryAttempt>& attempts) {
  std::string out =
      "<h2>Attempts</h2>\n<table id=\"attempts\"><tr><th>Delivery id</th><th>Endpoint</th>"
      "<th>#</th><th>Trigger</th><th>Started</th><th>Status</th><th>Latency</th><th>Error</th>"
      "<th>Response</th><th>Trace</th></tr>\n";
  for (const DeliveryAttempt& a : attempts) {
    out += "<tr data-delivery-id=\"" + escape_html(a.delivery_id) + "\">" +
           console_cell("delivery-id", a.delivery_id) + console_cell("endpoint", a.endpoint_id) +
           console_cell("number", std::to_string(a.attempt_number)) +
           console_cell("trigger", std::string(to_string(a.trigger))) +
           console_cell("started", console_time(a.started_at)) +
           console_cell("status", console_status(a.status)) +
           console_cell("latency", std::to_string(a.latency_ms) + " ms") +
           console_cell("error", a.error == TransportError::none
                                     ? a.error_message
                                     : error_text(a.error, a.error_message)) +
           console_cell("response", a.response_snippet) +
           console_cell("trace", std::string(trace_id_of(a.traceparent))) + "</tr>\n";
  }
  if (attempts.empty()) out += "<tr class=\"none\"><td colspan=\"10\">no attempt yet</td></tr>\n";
  return out + "</table>\n";
}

}  // namespace

std::string event_body(const Event& e, const std::vector<Task>& tasks,
                       const std::vector<DeliveryAttempt>& attempts, bool can_act) {
  std::string out = "<dl class=\"facts\">";
  out += "<dt>Id</dt><dd><code id=\"event-id\">" + escape_html(e.event_id) + "</code></dd>";
  out += "<dt>Type</dt><dd><span id=\"event-type\">" + escape_html(e.type) + "</span></dd>";
  out += "<dt>Merchant</dt><dd><span id=\"event-merchant\">" + escape_html(e.merchant_id) +
         "</span></dd>";
  out += "<dt>Idempotency key</dt><dd><span id=\"event-idempotency-key\">" +
         escape_html(e.idempotency_key) + "</span></dd>";
  out += "<dt>Ordering key</dt><dd><span id=\"event-ordering-key\">" + escape_html(e.ordering_key) +
         "</span></dd>";
  out += "<dt>Trace id</dt><dd><code id=\"event-trace-id\">" +
         escape_html(std::string(trace_id_of(e.traceparent))) + "</code></dd>";
  out += "<dt>Created</dt><dd><span id=\"event-created\">" +
         escape_html(console_time(e.created_at)) + "</span></dd></dl>\n";
  if (can_act) {
    out +=
        "<div class=\"actions\">\n<button type=\"button\" data-action=\"replay\" "
        "data-url=\"/v1/events/" +
        escape_html(url_encode(e.event_id)) +
        "/replay\" data-body=\"{}\">Replay to every endpoint</button>\n</div>\n"
        "<p id=\"action-result\" role=\"status\"></p>\n";
  }
  out += "<h2>Payload</h2>\n<pre id=\"payload\">" + escape_html(console_pretty_json(e.payload)) +
         "</pre>\n";
  return out + tasks_table(tasks) + attempts_table(attempts);
}

}  // namespace webhooks::publisher::detail
