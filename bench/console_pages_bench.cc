// bench_console_pages: the publisher console's pages with many events stored (issue 15: "under 100
// ms with 1,000,000 events"): a SQLite database filled with N events (default 1,000,000;
// `bench_console_pages N`), one task each over 4 endpoints (2% dead, 14% pending, the rest
// succeeded) and an attempt for each of the newest 10,000 (the last hour's charts, the endpoints'
// figures); then an in-process Publisher on loopback HTTP, signed in, each page fetched 20 times:
// p50 and max in ms (the overview's first fetch counts; the others read its snapshot), and the
// overview's background recount. (bench_console measures the Store's reads under the pages alone.)
#include <httplib.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "webhooks/http_server.h"
#include "webhooks/publisher/publisher.h"
#include "webhooks/publisher/store.h"
#include "webhooks/secret.h"

namespace {

using namespace webhooks;
using Steady = std::chrono::steady_clock;
constexpr const char* kToken = "bench-console-token";
constexpr std::int64_t kAttempts = 10'000;

publisher::Options options(const std::string& path) {
  publisher::Options o;
  o.database = path;
  o.admin_token = kToken;
  o.allow_private_networks = true;
  return o;
}

void add_endpoints(publisher::Store& store, UnixMillis now) {
  for (int i = 0; i < 4; ++i) {
    publisher::Endpoint e;
    e.id = "ep_" + std::to_string(i);
    e.merchant_id = i < 2 ? "m_a" : "m_b";
    e.url = "http://127.0.0.1:9/hook";
    e.created_at = e.updated_at = now;
    e.secrets.push_back({Secret::generate().to_string(), now, std::nullopt});
    store.create_endpoint(e);
  }
}

// Events i = 0..count-1, 10 ms apart, the newest at `now`; one task each; attempts for the newest.
double fill(publisher::Publisher& pub, std::int64_t count, UnixMillis now) {
  const auto t0 = Steady::now();
  add_endpoints(pub.store(), now);
  constexpr const char* kSeries =
      "WITH RECURSIVE n(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $2) ";
  constexpr std::int64_t kChunk = 100'000;
  for (std::int64_t from = 0; from < count; from += kChunk) {
    const std::int64_t to = std::min(count, from + kChunk);
    pub.database().transact([&](db::Transaction& tx) {
      tx.exec(std::string(kSeries) +
                  "INSERT INTO publisher_events (event_id, merchant_id, event_type, payload, "
                  "created_at, idempotency_key) SELECT printf('0190e1c2-7a3b-7c00-8000-%012d', i), "
                  "CASE WHEN i % 4 < 2 THEN 'm_a' ELSE 'm_b' END, "
                  "CASE WHEN i % 100 = 0 THEN 'order.refunded' ELSE 'order.captured' END, "
                  "'{\"order_id\":\"ord_' || i || '\",\"amount\":1000}', $3 - ($2 - i) * 10, "
                  "'key-' || i FROM n",
              {from, to, std::int64_t{now}});
      tx.exec(std::string(kSeries) +
                  "INSERT INTO publisher_tasks (event_id, endpoint_id, state, attempts, "
                  "next_attempt_at, next_trigger, age_from, created_at, updated_at, "
                  "event_created_at) SELECT printf('0190e1c2-7a3b-7c00-8000-%012d', i), "
                  "'ep_' || (i % 4), CASE WHEN i % 50 = 0 THEN 'dead' WHEN i % 7 = 0 THEN "
                  "'pending' ELSE 'succeeded' END, 1, $3, 'scheduled', $3, $3, $3, "
                  "$3 - ($2 - i) * 10 FROM n",
              {from, to, std::int64_t{now}});
    });
  }
  pub.database().transact([&](db::Transaction& tx) {
    tx.exec(std::string(kSeries) +
                "INSERT INTO publisher_attempts (delivery_id, task_id, event_id, endpoint_id, "
                "attempt_number, trigger_kind, started_at, status, latency_ms, error, "
                "response_snippet) SELECT printf('0190e1c2-7a3b-7c00-9000-%012d', i), i + 1, "
                "printf('0190e1c2-7a3b-7c00-8000-%012d', i), 'ep_' || (i % 4), 1, 'scheduled', "
                "$3 - ($2 - i) * 300, CASE WHEN i % 10 = 0 THEN 500 ELSE 200 END, 20 + i % 50, "
                "NULL, 'ok' FROM n",
            {count - kAttempts, count, std::int64_t{now}});
  });
  return std::chrono::duration<double>(Steady::now() - t0).count();
}

std::string sign_in(int port) {
  httplib::Client client("127.0.0.1", port);
  const auto answer = client.Post("/console/login", std::string("token=") + kToken,
                                  "application/x-www-form-urlencoded");
  if (!answer || answer->status != 303) return "";
  const std::string cookie = answer->get_header_value("Set-Cookie");
  return cookie.substr(0, cookie.find(';'));
}

// The href of a#next-page (&amp; unescaped), or "".
std::string next_page(const std::string& page) {
  const std::string start = "<a id=\"next-page\" href=\"";
  const std::size_t at = page.find(start);
  if (at == std::string::npos) return "";
  const std::size_t from = at + start.size();
  std::string href = page.substr(from, page.find('"', from) - from);
  for (std::size_t amp = href.find("&amp;"); amp != std::string::npos; amp = href.find("&amp;")) {
    href.replace(amp, 5, "&");
  }
  return href;
}

void measure(int port, const std::string& cookie, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  std::vector<double> ms;
  int status = 0;
  for (int i = 0; i < 20; ++i) {
    const auto t0 = Steady::now();
    const auto answer = client.Get(path.c_str(), {{"Cookie", cookie}});
    ms.push_back(std::chrono::duration<double, std::milli>(Steady::now() - t0).count());
    status = answer ? answer->status : 0;
  }
  std::printf("  %-58s %3d  p50 %7.2f ms  max %7.2f ms\n", path.substr(0, 58).c_str(), status,
              bench::median(ms), bench::quantile(ms, 1.0));
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t count = argc > 1 ? std::max(std::atoll(argv[1]), 10'001LL) : 1'000'000;
  char dir_template[] = "/tmp/webhooks-bench-console-pages.XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  publisher::Publisher pub(options(dir + "/console.db"));
  const UnixMillis now = system_clock().now_ms();
  std::printf("bench_console_pages: the publisher console's pages, SQLite, %lld events\n",
              static_cast<long long>(count));
  std::printf("  filled in %.1f s\n", fill(pub, count, now));
  http::Server server;
  pub.mount(server);
  const int port = http::bind_server(server, "127.0.0.1", 0);
  std::thread serving([&] { server.listen_after_bind(); });
  const std::string cookie = sign_in(port);
  httplib::Client client("127.0.0.1", port);
  const auto first = client.Get("/console/events", {{"Cookie", cookie}});
  const std::string second = first ? next_page(first->body) : "";
  for (const std::string& path : std::vector<std::string>{
           "/console", "/console/endpoints", "/console/endpoints/ep_0", "/console/events", second,
           "/console/events?state=dead", "/console/events?type=order.refunded",
           "/console/events?merchant_id=m_b&state=pending", "/console/events?q=key-123456",
           "/console/events/0190e1c2-7a3b-7c00-8000-000000000042"}) {
    if (!path.empty()) measure(port, cookie, path);
  }
  // The overview above is served from its snapshot once a count takes over 20 ms
  // (overview_snapshot.h); this is what the background recount costs, every --overview-refresh.
  std::vector<double> recount;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Steady::now();
    (void)pub.store().overview(system_clock().now_ms());
    recount.push_back(std::chrono::duration<double, std::milli>(Steady::now() - t0).count());
  }
  std::printf("  %-58s      p50 %7.2f ms  max %7.2f ms\n", "overview recount (background, 5 times)",
              bench::median(recount), bench::quantile(recount, 1.0));
  http::stop_server(server, port);
  serving.join();
  std::filesystem::remove_all(dir);
  return 0;
}
