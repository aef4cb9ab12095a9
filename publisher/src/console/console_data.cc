// What the console's pages read, through the Store's read calls only (store_console.cc: on the
// database's read connections): a page never writes and never holds a lock a delivery waits for.
#include "console/console_view.h"
#include "webhooks/error.h"

namespace webhooks::publisher::detail {

EventPage console_events(Store& store, const EventFilter& filter) {
  EventQuery query;
  if (!filter.state.empty()) {
    query.state = parse_task_state(filter.state);
    if (!query.state) {
      throw Error(ErrorCode::invalid_argument,
                  "state must be pending, delivering, succeeded or dead");
    }
  }
  query.merchant_id = filter.merchant_id;
  query.type = filter.type;
  query.since = filter.since;
  query.until = filter.until;
  query.q = filter.q;
  query.cursor = filter.cursor;
  query.limit = kEventsPerPage;
  return store.list_event_page(query);
}

OverviewFigures console_overview(const OverviewSnapshot::Reading& reading) {
  const Overview& overview = reading.overview;
  OverviewFigures figures;
  figures.taken_at = reading.taken_at;
  for (const MinuteBucket& minute : overview.minutes) {
    figures.deliveries_per_s.push_back(static_cast<double>(minute.attempts) / 60.0);
    figures.failure_percent.push_back(minute.attempts == 0
                                          ? 0.0
                                          : 100.0 * static_cast<double>(minute.failures) /
                                                static_cast<double>(minute.attempts));
  }
  figures.tasks = overview.tasks;
  figures.oldest_pending_since = overview.oldest_pending_since;
  figures.attention = overview.attention;
  return figures;
}

}  // namespace webhooks::publisher::detail
