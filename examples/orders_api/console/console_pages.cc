#include "console/console_pages.h"

#include "webhooks/console/html.h"
#include "webhooks/rfc3339.h"

namespace webhooks::orders {
namespace {

using console::escape_html;
using console::url_encode;
using idempotency::RecordView;

std::vector<console::NavLink> nav() { return {{"nav-keys", "/console", "Idempotency keys"}}; }

// A datetime-local value (UTC) or an RFC 3339 time.
std::optional<UnixMillis> read_time(const std::string& text) {
  if (auto ms = parse_rfc3339(text)) return ms;
  if (text.size() == 16) return parse_rfc3339(text + ":00Z");
  if (text.size() == 19) return parse_rfc3339(text + "Z");
  return std::nullopt;
}

std::string status_text(const RecordView& view) {
  return view.status ? std::to_string(*view.status) : "";
}

std::string key_href(const std::string& key) { return "/console/keys/" + url_encode(key); }

std::string filter_form(const KeysFilter& filter) {
  std::string out = "<form id=\"filters\" method=\"get\" action=\"/console\">\n";
  out += "<label>State <select name=\"state\" id=\"state\"><option value=\"\">any</option>";
  for (const char* state : {"in_progress", "completed", "failed"}) {
    out += "<option value=\"" + std::string(state) + "\"";
    if (filter.state == state) out += " selected";
    out += ">" + std::string(state) + "</option>";
  }
  out += "</select></label>\n";
  for (const auto& [name, value] : {std::pair{"since", &filter.since}, {"until", &filter.until}}) {
    out += "<label>" + std::string(name) +
           " (UTC) <input type=\"datetime-local\" step=\"1\" name=\"" + name + "\" value=\"" +
           escape_html(*value) + "\"></label>\n";
  }
  return out + "<button type=\"submit\" id=\"apply-filters\">Filter</button>\n</form>\n";
}

std::string key_row(const RecordView& view) {
  const auto cell = [](const char* name, const std::string& text) {
    return "<td class=\"" + std::string(name) + "\">" + escape_html(text) + "</td>";
  };
  std::string out = "<tr data-key=\"" + escape_html(view.key) + "\"><td class=\"key\"><a href=\"" +
                    escape_html(key_href(view.key)) + "\">" + escape_html(view.key) + "</a></td>";
  out += cell("state", std::string(idempotency::to_string(view.state)));
  out += cell("route", view.route) + cell("status", status_text(view));
  out += cell("replays", std::to_string(view.replays));
  out += cell("conflicts", std::to_string(view.conflicts));
  out += cell("mismatches", std::to_string(view.mismatches));
  out += cell("created", format_rfc3339(view.created_at));
  return out + cell("resource", view.resource_id.value_or("")) + "</tr>\n";
}

std::string next_link(const KeysFilter& filter, const std::string& cursor) {
  const std::string href = "/console?state=" + url_encode(filter.state) +
                           "&since=" + url_encode(filter.since) +
                           "&until=" + url_encode(filter.until) + "&cursor=" + url_encode(cursor);
  return "<p><a id=\"next-page\" href=\"" + escape_html(href) + "\">Older keys</a></p>\n";
}

}  // namespace

KeysFilter read_filter(const httplib::Request& req) {
  KeysFilter filter;
  filter.state = req.get_param_value("state");
  filter.since = req.get_param_value("since");
  filter.until = req.get_param_value("until");
  filter.query.cursor = req.get_param_value("cursor");
  if (filter.state == "in_progress") filter.query.state = idempotency::State::in_progress;
  if (filter.state == "completed") filter.query.state = idempotency::State::completed;
  if (filter.state == "failed") filter.query.state = idempotency::State::failed;
  if (!filter.state.empty() && !filter.query.state) filter.error = "Unknown state: " + filter.state;
  const auto time = [&](const std::string& text, UnixMillis& into, const char* name) {
    if (text.empty()) return;
    if (const auto ms = read_time(text)) {
      into = *ms;
    } else {
      filter.error = std::string("Not a time: ") + name + " = " + text;
    }
  };
  time(filter.since, filter.query.created_from, "since");
  time(filter.until, filter.query.created_until, "until");
  return filter;
}

console::Page keys_page(const std::string& csrf_token, const std::string& merchant,
                        const KeysFilter& filter, const idempotency::ListPage& page,
                        const std::string& error) {
  std::string body = "<h1>Idempotency keys of " + escape_html(merchant) + "</h1>\n";
  body += filter_form(filter);
  if (!error.empty())
    body += "<p id=\"filter-error\" class=\"error\">" + escape_html(error) + "</p>\n";
  body +=
      "<table id=\"keys\">\n<thead><tr><th>Key</th><th>State</th><th>Route</th><th>Status</th>"
      "<th>Replays</th><th>409s</th><th>422s</th><th>Created (UTC)</th><th>Resource</th></tr>"
      "</thead>\n<tbody>\n";
  for (const RecordView& view : page.records) body += key_row(view);
  body += "</tbody>\n</table>\n";
  if (page.records.empty()) body += "<p id=\"no-keys\">No keys.</p>\n";
  if (!page.next_cursor.empty()) body += next_link(filter, page.next_cursor);
  return {kConsoleTitle, "Idempotency keys", nav(), "nav-keys", csrf_token, std::move(body)};
}

console::Page key_detail_page(const std::string& csrf_token, const std::string& key,
                              const std::optional<RecordView>& view) {
  std::string body = "<h1>Key " + escape_html(key) + "</h1>\n";
  if (!view) {
    body +=
        "<p id=\"key-missing\">No such key for this merchant (unknown, expired, or another "
        "merchant's).</p>\n";
    return {kConsoleTitle, "Key " + key, nav(), "nav-keys", csrf_token, std::move(body)};
  }
  const auto fact = [](const char* id, const char* label, const std::string& value) {
    return "<dt>" + std::string(label) + "</dt><dd id=\"" + id + "\">" + escape_html(value) +
           "</dd>\n";
  };
  body += "<dl class=\"facts\">\n";
  body += fact("key-state", "State", std::string(idempotency::to_string(view->state)));
  body += fact("key-route", "Route", view->route);
  body += fact("key-status", "Status", status_text(*view));
  body += fact("key-attempts", "Attempts", std::to_string(view->attempts));
  body += fact("resource-id", "Resource", view->resource_id.value_or(""));
  body += fact("key-created", "Created (UTC)", format_rfc3339(view->created_at));
  body += fact("key-updated", "Updated (UTC)", format_rfc3339(view->updated_at));
  body += fact("key-expires", "Expires (UTC)", format_rfc3339(view->expires_at));
  body += fact("key-fingerprint", "Fingerprint (SHA-256)", view->fingerprint);
  body += fact("key-replays", "Replays", std::to_string(view->replays));
  body += fact("key-conflicts", "409s (in progress)", std::to_string(view->conflicts));
  body += fact("key-mismatches", "422s (other body)", std::to_string(view->mismatches));
  body += "</dl>\n<p><a id=\"back\" href=\"/console\">All keys</a></p>\n";
  return {kConsoleTitle, "Key " + key, nav(), "nav-keys", csrf_token, std::move(body)};
}

}  // namespace webhooks::orders
