// What the console's pages read, through the Store's read calls only: a page never writes and
// never holds a lock a delivery waits for.
#include "console_view.h"
#include "webhooks/error.h"

namespace webhooks::publisher::detail {

EventRows console_events(Store& store, const EventFilter& filter) {
  std::optional<TaskState> state;
  if (!filter.state.empty()) {
    state = parse_task_state(filter.state);
    if (!state)
      throw Error(ErrorCode::invalid_argument,
                  "state must be pending, delivering, "
                  "succeeded or dead");
  }
  EventRows rows;
  if (!filter.q.empty()) {
    if (std::optional<Event> event = store.find_event(filter.q)) rows.events.push_back(*event);
  } else {
    EventQuery query;
    query.merchant_id = filter.merchant_id;
    query.type = filter.type;
    query.since = filter.since;
    query.limit = kEventsPerPage;
    rows.events = store.list_events(query);
  }
  std::erase_if(rows.events, [&](const Event& e) {
    return (filter.until && e.created_at >= *filter.until) ||
           (!filter.merchant_id.empty() && e.merchant_id != filter.merchant_id) ||
           (!filter.type.empty() && e.type != filter.type);
  });
  for (const Event& event : rows.events) {
    auto& counts = rows.states[event.event_id];
    for (const Task& task : store.tasks_of_event(event.event_id)) ++counts[task.state];
  }
  if (state) {
    std::erase_if(rows.events,
                  [&](const Event& e) { return rows.states[e.event_id][*state] == 0; });
  }
  return rows;
}

EndpointFigures console_endpoint_figures(Store&, const std::string&) { return {}; }

OverviewFigures console_overview(Store& store, UnixMillis) {
  OverviewFigures figures;
  figures.deliveries_per_s.assign(60, 0);
  figures.failure_percent.assign(60, 0);
  figures.tasks = store.count_tasks();
  for (Endpoint& endpoint : store.list_endpoints("")) {
    if (!endpoint.enabled || endpoint.failing_since)
      figures.attention.push_back(std::move(endpoint));
  }
  return figures;
}

}  // namespace webhooks::publisher::detail
