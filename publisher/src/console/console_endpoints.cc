// The console's overview, endpoints and endpoint pages.
#include <nlohmann/json.hpp>

#include "console/console_view.h"
#include "webhooks/console/chart.h"
#include "webhooks/console/html.h"

namespace webhooks::publisher::detail {
namespace {

using console::escape_html;
using console::format_number;

std::string endpoint_link(const std::string& id, const std::string& text) {
  return "<a href=\"/console/endpoints/" + escape_html(console::url_encode(id)) + "\">" +
         escape_html(text) + "</a>";
}

std::string charts(const OverviewFigures& f) {
  console::Chart deliveries{"chart-deliveries",
                            "Deliveries per second, last hour",
                            f.deliveries_per_s,
                            "-60 min",
                            "now",
                            "/s"};
  console::Chart failures{
      "chart-failures", "Failure rate, last hour", f.failure_percent, "-60 min", "now", "%"};
  return "<div class=\"charts\">" + console::render_chart(deliveries) +
         console::render_chart(failures) + "</div>\n";
}

std::string queue_table(const OverviewFigures& f, UnixMillis now) {
  std::string out =
      "<h2>Queue</h2>\n<table id=\"queue-depth\"><tr><th>State</th><th>Tasks</th></tr>";
  for (const TaskState state :
       {TaskState::pending, TaskState::delivering, TaskState::succeeded, TaskState::dead}) {
    const auto it = f.tasks.find(state);
    const std::string name(to_string(state));
    // Succeeded: the last hour's events only (Overview::tasks), so the page never counts the
    // whole history.
    const std::string label = state == TaskState::succeeded ? name + " (last hour's events)" : name;
    out += "<tr data-state=\"" + name + "\"><td>" + label + "</td>" +
           console_cell("count", std::to_string(it == f.tasks.end() ? 0 : it->second)) + "</tr>";
  }
  out += "</table>\n<p>Oldest pending task: <span id=\"oldest-pending\">" +
         escape_html(f.oldest_pending_since ? console_age(now - *f.oldest_pending_since)
                                            : std::string("none")) +
         "</span></p>\n";
  // Under a big queue the figures are a snapshot (overview_snapshot.h): say how old.
  out += "<p class=\"taken-at\">Counted at <span id=\"taken-at\">" +
         escape_html(console_time(f.taken_at)) + "</span>" +
         (now - f.taken_at >= 1000 ? " (" + escape_html(console_age(now - f.taken_at)) + " ago)"
                                   : std::string()) +
         "</p>\n";
  return out;
}

std::string attention_list(const std::vector<EndpointAttention>& endpoints, UnixMillis now) {
  std::string out = "<h2>Endpoints needing attention</h2>\n<ul id=\"attention\">";
  for (const EndpointAttention& e : endpoints) {
    out += "<li data-endpoint-id=\"" + escape_html(e.endpoint_id) + "\">" +
           endpoint_link(e.endpoint_id, e.endpoint_id) + " (" + escape_html(e.merchant_id) + "): ";
    out += e.enabled
               ? "failing for " + escape_html(console_age(now - e.failing_since.value_or(now)))
               : "disabled, " + escape_html(e.reason);
    out += "</li>";
  }
  if (endpoints.empty()) out += "<li class=\"none\">none</li>";
  return out + "</ul>\n";
}

std::string percent(double rate) { return format_number(rate * 100) + "%"; }

}  // namespace

std::string overview_body(const OverviewFigures& figures, UnixMillis now) {
  return charts(figures) + queue_table(figures, now) + attention_list(figures.attention, now);
}

std::string endpoints_body(const std::vector<Endpoint>& endpoints,
                           const std::map<std::string, EndpointStats>& stats) {
  std::string out =
      "<table id=\"endpoints\"><tr><th>Endpoint</th><th>Merchant</th><th>URL</th><th>Filters</th>"
      "<th>State</th><th>Reason</th><th>Failing since</th><th>Success</th><th>p50</th>"
      "<th>p99</th><th>Last status</th></tr>\n";
  for (const Endpoint& e : endpoints) {
    const EndpointStats f = stats.count(e.id) ? stats.at(e.id) : EndpointStats{};
    const bool any = f.attempts > 0;
    out +=
        "<tr data-endpoint-id=\"" + escape_html(e.id) + "\"><td class=\"id\">" +
        endpoint_link(e.id, e.id) + "</td>" + console_cell("merchant", e.merchant_id) +
        console_cell("url", e.url) + console_cell("filters", console_filters(e.event_types)) +
        console_cell(e.enabled ? "state" : "state disabled", e.enabled ? "enabled" : "disabled") +
        console_cell("reason", e.disabled_reason) +
        console_cell("failing-since", e.failing_since ? console_time(*e.failing_since) : "") +
        console_cell("success-rate", any ? percent(f.success_rate) : "") +
        console_cell("p50", any ? std::to_string(f.p50_ms) + " ms" : "") +
        console_cell("p99", any ? std::to_string(f.p99_ms) + " ms" : "") +
        console_cell("last-status", any ? console_status(f.last_status) : "") + "</tr>\n";
  }
  return out + "</table>\n";
}

namespace {

std::string action(const std::string& name, const std::string& label, const std::string& url,
                   const std::string& body, const char* extra = "") {
  return "<button type=\"button\" data-action=\"" + name + "\" data-url=\"" + escape_html(url) +
         "\" data-body=\"" + escape_html(body) + "\"" + extra + ">" + escape_html(label) +
         "</button>\n";
}

std::string actions(const Endpoint& e) {
  const std::string base = "/v1/endpoints/" + console::url_encode(e.id);
  const nlohmann::json test = {{"merchant_id", e.merchant_id},
                               {"type", "webhooks.test"},
                               {"data", {{"endpoint_id", e.id}, {"test", true}}}};
  std::string out = "<div class=\"actions\">\n";
  out += action("enable", "Enable", base + "/enable", "{}");
  out += action("disable", "Disable", base + "/disable", R"({"reason":"disabled by an operator"})");
  out += action("rotate-secret", "Rotate secret", base + "/rotate-secret", "{}", " data-secret");
  out += action("send-test", "Send a test event", "/v1/events", test.dump(), " data-idempotency");
  out +=
      "</div>\n<div class=\"actions\">\n<label for=\"since\">Since (UTC)</label>\n"
      "<input id=\"since\" type=\"datetime-local\" step=\"1\">\n";
  out += action("recover", "Recover failed since", base + "/recover", R"({"since":"{since}"})");
  out += action("replay-missing", "Replay missing since", base + "/replay-missing",
                R"({"since":"{since}"})");
  out +=
      "</div>\n<p id=\"action-result\" role=\"status\"></p>\n"
      "<p>New secret (shown once): <code id=\"new-secret\"></code></p>\n";
  return out;
}

}  // namespace

std::string endpoint_body(const Endpoint& e, const EndpointStats& f, bool can_act) {
  const bool any = f.attempts > 0;
  std::string out = "<dl class=\"facts\">";
  auto fact = [&out](const char* name, const std::string& html) {
    out += std::string("<dt>") + name + "</dt><dd>" + html + "</dd>";
  };
  fact("Id", "<code id=\"endpoint-id\">" + escape_html(e.id) + "</code>");
  fact("Merchant",
       "<a href=\"/console/events?merchant_id=" + escape_html(console::url_encode(e.merchant_id)) +
           "\" id=\"merchant\">" + escape_html(e.merchant_id) + "</a>");
  fact("URL", "<span id=\"endpoint-url\">" + escape_html(e.url) + "</span>");
  fact("Filters", escape_html(console_filters(e.event_types)));
  fact("Description", escape_html(e.description));
  fact("State", "<span id=\"endpoint-state\">" + std::string(e.enabled ? "enabled" : "disabled") +
                    "</span>");
  fact("Disabled because",
       "<span id=\"disabled-reason\">" + escape_html(e.disabled_reason) + "</span>");
  fact("Failing since", "<span id=\"failing-since\">" +
                            escape_html(e.failing_since ? console_time(*e.failing_since) : "") +
                            "</span>");
  fact("Last 100 attempts",
       any ? escape_html(std::to_string(f.attempts) + " attempts, " + percent(f.success_rate) +
                         " succeeded, p50 " + std::to_string(f.p50_ms) + " ms, p99 " +
                         std::to_string(f.p99_ms) + " ms, last status " +
                         console_status(f.last_status))
           : std::string("none"));
  const DeliveryControl& c = e.control;
  fact("Rate limit", "<span id=\"rate-limit\">" +
                         escape_html(c.rate_limit ? std::to_string(*c.rate_limit) + " per second"
                                                  : std::string("none")) +
                         "</span>");
  fact("Ordering",
       "<span id=\"ordering\">" +
           std::string(c.ordering == Ordering::fifo ? "fifo (one event at a time per ordering key)"
                                                    : "none") +
           "</span>");
  std::string headers;
  for (const auto& [name, value] : c.headers) headers += (headers.empty() ? "" : ", ") + name;
  fact("Static headers", "<span id=\"static-headers\">" + escape_html(headers) + "</span>");
  fact("Credential", "<span id=\"auth\">" +
                         std::string(c.auth.type == EndpointAuth::Type::none
                                         ? "none"
                                         : std::string(to_string(c.auth.type)) + " (not shown)") +
                         "</span>");
  fact("Client certificate",
       "<span id=\"client-certificate\">" +
           std::string(c.client_certificate.empty() ? "none" : "set (mutual TLS)") + "</span>");
  fact("Created", escape_html(console_time(e.created_at)));
  return out + "</dl>\n" + (can_act ? actions(e) : "");
}

}  // namespace webhooks::publisher::detail
