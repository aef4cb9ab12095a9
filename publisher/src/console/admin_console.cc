// The console's routes of the admin API: replay-missing, an endpoint's stats, the overview.
#include <httplib.h>

#include "api/admin_api.h"
#include "api/admin_json.h"
#include "webhooks/log.h"
#include "webhooks/rfc3339.h"

namespace webhooks::publisher {
namespace {

using detail::answer;
using detail::fail;
using nlohmann::json;

json optional_time(const std::optional<UnixMillis>& t) {
  return t ? json(format_rfc3339(*t)) : json();
}

// POST /v1/endpoints/{id}/replay-missing {"since": RFC 3339}: tasks for the endpoint's events
// since then that never had one (202), within `max_age`; `wake` (if set) when one was queued.
void replay_missing(Store& store, const Clock& clock, std::chrono::milliseconds max_age,
                    const std::function<void()>& wake, const httplib::Request& req,
                    httplib::Response& res) {
  const std::optional<UnixMillis> since = detail::since_field(req, res);
  if (!since) return;
  const std::string id = req.matches[1];
  const UnixMillis now = clock.now_ms();
  if (!store.find_endpoint(id)) return fail(res, 404, "not_found", "no such endpoint");
  if (now - *since > max_age.count()) {
    return fail(res, 422, "replay_too_old",
                "since is further back than the replay window (--replay-max-age); receivers may "
                "no longer recognise those events as duplicates");
  }
  const std::optional<int> tasks = store.replay_missing(id, *since, now);
  if (!tasks) return fail(res, 404, "not_found", "no such endpoint");  // deleted meanwhile
  log_event(spdlog::level::info, {{"event", "endpoint_replayed_missing"},
                                  {"endpoint_id", id},
                                  {"since", format_rfc3339(*since)},
                                  {"tasks", *tasks}});
  if (*tasks > 0 && wake) wake();
  answer(res, 202, {{"endpoint_id", id}, {"tasks", *tasks}});
}

// GET /v1/endpoints/{id}/stats: its last attempts summed up.
void endpoint_stats(Store& store, const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches[1];
  if (!store.find_endpoint(id)) return fail(res, 404, "not_found", "no such endpoint");
  const EndpointStats s = store.endpoint_stats(id);
  answer(res, 200,
         {{"endpoint_id", s.endpoint_id},
          {"window", kStatsWindow},
          {"attempts", s.attempts},
          {"succeeded", s.succeeded},
          {"success_rate", s.success_rate},
          {"p50_ms", s.p50_ms},
          {"p99_ms", s.p99_ms},
          {"last_status", s.attempts > 0 ? json(s.last_status) : json()},
          {"last_attempt_at", optional_time(s.last_attempt_at)}});
}

// GET /v1/overview: the last hour per minute, the queue, the oldest waiting task, attention, as
// read at `taken_at` (now, or the snapshot's time under a big queue: overview_snapshot.h).
void overview(OverviewSnapshot& snapshot, const Clock& clock, const httplib::Request&,
              httplib::Response& res) {
  const OverviewSnapshot::Reading reading = snapshot.read();
  const UnixMillis now = clock.now_ms();
  const Overview& o = reading.overview;
  json minutes = json::array();
  for (const MinuteBucket& m : o.minutes) {
    minutes.push_back(
        {{"start", format_rfc3339(m.start)}, {"attempts", m.attempts}, {"failures", m.failures}});
  }
  json tasks = json::object();
  for (const auto& [state, count] : o.tasks) tasks[std::string(to_string(state))] = count;
  json attention = json::array();
  for (const EndpointAttention& a : o.attention) {
    attention.push_back({{"endpoint_id", a.endpoint_id},
                         {"merchant_id", a.merchant_id},
                         {"enabled", a.enabled},
                         {"disabled_reason", a.enabled ? json() : json(a.reason)},
                         {"failing_since", optional_time(a.failing_since)}});
  }
  answer(res, 200,
         {{"now", format_rfc3339(now)},
          {"taken_at", format_rfc3339(reading.taken_at)},
          {"minutes", minutes},
          {"tasks", tasks},
          {"succeeded_since", format_rfc3339(o.succeeded_since)},
          {"oldest_pending_since", optional_time(o.oldest_pending_since)},
          {"oldest_pending_age_ms",
           o.oldest_pending_since ? json(std::max<std::int64_t>(0, now - *o.oldest_pending_since))
                                  : json()},
          {"attention", attention}});
}

}  // namespace

void AdminApi::mount_console(http::Server& server) {
  using Request = httplib::Request;
  using Response = httplib::Response;
  server.Post(R"(/v1/endpoints/([^/]+)/replay-missing)",
              audited([this](const Request& req, Response& res) {
                replay_missing(store_, clock_, options_.replay_max_age, wake_, req, res);
              }));
  server.Get(R"(/v1/endpoints/([^/]+)/stats)",
             [this](const Request& req, Response& res) { endpoint_stats(store_, req, res); });
  server.Get("/v1/overview",
             [this](const Request& req, Response& res) { overview(overview_, clock_, req, res); });
}

}  // namespace webhooks::publisher
