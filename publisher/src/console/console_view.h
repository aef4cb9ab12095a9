// The publisher console's pages (docs/console.md): what each page reads from the Store
// (console_data.cc, reads only) and how it is rendered to HTML (console_*.cc; every value
// escaped). The ids and classes are the console contract the browser tests rely on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "console/overview_snapshot.h"
#include "webhooks/clock.h"
#include "webhooks/console/session.h"
#include "webhooks/publisher/model.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher::detail {

// The events page's filters, as given in its query string (times already parsed).
struct EventFilter {
  std::string merchant_id, type, state, q, cursor;
  std::optional<UnixMillis> since, until;
};

struct OverviewFigures {
  UnixMillis taken_at = 0;               // when the figures were read (overview_snapshot.h)
  std::vector<double> deliveries_per_s;  // 60 minutes, oldest first
  std::vector<double> failure_percent;   // 60 minutes, oldest first
  std::map<TaskState, std::int64_t> tasks;
  std::optional<UnixMillis> oldest_pending_since;
  std::vector<EndpointAttention> attention;  // disabled or failing
};

inline constexpr int kEventsPerPage = 50;

// --- Routes (console_routes.cc) ---
// Answers `status` with a console page: `body` inside the layout, the nav item `nav` active.
void send_console_page(httplib::Response& res, const console::Session& session,
                       const std::string& nav, std::string title, std::string body,
                       int status = 200);
// The query's "since" and "until" (console_parse_time) into `since` and `until` (kept when
// absent or empty); `error` says which one was refused.
void console_time_filters(const httplib::Request& req, std::optional<UnixMillis>& since,
                          std::optional<UnixMillis>& until, std::string& error);

// --- Reads (console_data.cc). Throw Error(invalid_argument) for a bad cursor or state. ---
// A page of kEventsPerPage events. (An endpoint's figures are Store::endpoint_stats.)
EventPage console_events(Store& store, const EventFilter& filter);
OverviewFigures console_overview(const OverviewSnapshot::Reading& reading);

// --- Page bodies (HTML inside <main>) ---
std::string overview_body(const OverviewFigures& figures, UnixMillis now);
std::string endpoints_body(const std::vector<Endpoint>& endpoints,
                           const std::map<std::string, EndpointStats>& stats);
// `can_act`: the action buttons are shown (an admin's session; a viewer's sees none).
std::string endpoint_body(const Endpoint& endpoint, const EndpointStats& stats, bool can_act);
std::string events_body(const EventFilter& filter, const EventPage& page, const std::string& error);
std::string event_body(const Event& event, const std::vector<Task>& tasks,
                       const std::vector<DeliveryAttempt>& attempts, bool can_act);

// --- Shared formatting (console_format.cc) ---
std::string console_time(UnixMillis ms);                                   // RFC 3339, or "" for 0
std::string console_age(std::int64_t ms);                                  // "2h 3m", "4m 5s", "6s"
std::string console_status(int status);                                    // "200", or "none" for 0
std::string console_states(const std::map<TaskState, int>& states);        // "pending: 1, dead: 2"
std::string console_filters(const std::vector<std::string>& event_types);  // "*" when empty
// `payload` (JSON text) indented by 2, or as it is when it does not parse; not yet escaped.
std::string console_pretty_json(const std::string& payload);
// A time filter: RFC 3339, or "YYYY-MM-DDTHH:MM[:SS]" read as UTC. std::nullopt when neither.
std::optional<UnixMillis> console_parse_time(const std::string& text);
// <td class="CLS">text, escaped</td>
std::string console_cell(const char* cls, const std::string& text);
// A filter form's <label>LABEL<input name="NAME" id="filter-NAME" value=…></label>.
std::string console_input(const char* name, const char* label, const std::string& value,
                          const char* placeholder = "");
// <p><a id="next-page" href="PATH?name=value&…&cursor=CURSOR">LABEL</a></p>: the next page of a
// listing with the same filters (the empty ones left out).
std::string console_next_link(const std::string& path,
                              const std::vector<std::pair<const char*, std::string>>& filters,
                              const std::string& cursor, const char* label);

}  // namespace webhooks::publisher::detail
