#include <nlohmann/json.hpp>

#include "console/console_view.h"
#include "webhooks/console/chart.h"
#include "webhooks/console/html.h"
#include "webhooks/rfc3339.h"

namespace webhooks::publisher::detail {

std::string console_time(UnixMillis ms) { return ms == 0 ? std::string() : format_rfc3339(ms); }

std::string console_age(std::int64_t ms) {
  const std::int64_t s = ms < 0 ? 0 : ms / 1000;
  if (s >= 86400) return std::to_string(s / 86400) + "d " + std::to_string(s % 86400 / 3600) + "h";
  if (s >= 3600) return std::to_string(s / 3600) + "h " + std::to_string(s % 3600 / 60) + "m";
  if (s >= 60) return std::to_string(s / 60) + "m " + std::to_string(s % 60) + "s";
  return std::to_string(s) + "s";
}

std::string console_status(int status) { return status == 0 ? "none" : std::to_string(status); }

std::string console_states(const std::map<TaskState, int>& states) {
  std::string out;
  for (const auto& [state, count] : states) {
    if (count == 0) continue;
    if (!out.empty()) out += ", ";
    out += std::string(to_string(state)) + ": " + std::to_string(count);
  }
  return out.empty() ? "no tasks" : out;
}

std::string console_filters(const std::vector<std::string>& event_types) {
  if (event_types.empty()) return "*";
  std::string out;
  for (const std::string& type : event_types) out += (out.empty() ? "" : ", ") + type;
  return out;
}

std::string console_pretty_json(const std::string& payload) {
  // Re-indented, not parsed and dumped: a number (36893488147419103233, 1.50), a string and the
  // order of keys stay byte for byte as stored and delivered.
  if (!nlohmann::json::accept(payload)) return payload;
  std::string out;
  int depth = 0;
  bool in_string = false, escaped = false;
  const auto newline = [&] { out += '\n' + std::string(static_cast<std::size_t>(depth) * 2, ' '); };
  for (std::size_t i = 0; i < payload.size(); ++i) {
    const char c = payload[i];
    if (in_string) {
      out += c;
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '{' || c == '[') {
      std::size_t next = payload.find_first_not_of(" \t\n\r", i + 1);
      if (next != std::string::npos && (payload[next] == '}' || payload[next] == ']')) {
        out += std::string{c, payload[next]};  // {} or []
        i = next;
        continue;
      }
      out += c;
      ++depth;
      newline();
    } else if (c == '}' || c == ']') {
      --depth;
      newline();
      out += c;
    } else if (c == ',') {
      out += c;
      newline();
    } else {
      in_string = c == '"';
      out += c == ':' ? std::string(": ") : std::string(1, c);
    }
  }
  return out;
}

std::optional<UnixMillis> console_parse_time(const std::string& text) {
  if (std::optional<UnixMillis> ms = parse_rfc3339(text)) return ms;
  if (text.size() == 16) return parse_rfc3339(text + ":00Z");  // datetime-local, minutes
  if (text.size() == 19) return parse_rfc3339(text + "Z");
  return std::nullopt;
}

std::string console_cell(const char* cls, const std::string& text) {
  return std::string("<td class=\"") + cls + "\">" + console::escape_html(text) + "</td>";
}

std::string console_input(const char* name, const char* label, const std::string& value,
                          const char* placeholder) {
  return std::string("<label>") + label + "<input name=\"" + name + "\" id=\"filter-" + name +
         "\" value=\"" + console::escape_html(value) + "\" placeholder=\"" + placeholder +
         "\"></label>\n";
}

std::string console_next_link(const std::string& path,
                              const std::vector<std::pair<const char*, std::string>>& filters,
                              const std::string& cursor, const char* label) {
  std::string query;
  for (const auto& [name, value] : filters) {
    if (!value.empty()) query += std::string(name) + "=" + console::url_encode(value) + "&";
  }
  query += "cursor=" + console::url_encode(cursor);
  return "<p><a id=\"next-page\" href=\"" + console::escape_html(path + "?" + query) + "\">" +
         label + "</a></p>\n";
}

}  // namespace webhooks::publisher::detail
