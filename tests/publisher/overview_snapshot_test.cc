// OverviewSnapshot: per request while counting is cheap, a snapshot refreshed in the background
// once it is not; on SQLite and PostgreSQL.
#include "console/overview_snapshot.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "console_support.h"

namespace webhooks::test {
namespace {

using publisher::OverviewSnapshot;
using publisher::TaskState;
using namespace std::chrono_literals;

std::int64_t pending(const OverviewSnapshot::Reading& r) {
  return r.overview.tasks.at(TaskState::pending);
}

TEST_CASE("overview: computed per request while within budget", "[console]") {
  PublisherFixture f("overview_per_request");
  f.add_endpoint("m1", "http://127.0.0.1:9/a");
  OverviewSnapshot overview(f.store, f.clock, {std::chrono::hours(1), 5s});
  f.publish("m1", "order.created");
  const auto first = overview.read();
  CHECK(pending(first) == 1);
  CHECK(first.taken_at == 1'700'000'000'000);
  CHECK_FALSE(overview.using_snapshot());
  f.clock.advance(1500ms);
  f.publish("m1", "order.created");
  const auto second = overview.read();
  CHECK(pending(second) == 2);
  CHECK(second.taken_at == 1'700'000'001'500);
}

TEST_CASE("overview: over budget, reads answer the snapshot until it is refreshed", "[console]") {
  PublisherFixture f("overview_snapshot");
  f.add_endpoint("m1", "http://127.0.0.1:9/a");
  OverviewSnapshot overview(f.store, f.clock, {0ms, 5s});  // 0: always the snapshot
  f.publish("m1", "order.created");
  const auto first = overview.read();  // no snapshot yet: computed
  CHECK(pending(first) == 1);
  CHECK(overview.using_snapshot());
  f.clock.advance(2000ms);
  f.publish("m1", "order.created");
  const auto stale = overview.read();
  CHECK(pending(stale) == 1);
  CHECK(stale.taken_at == 1'700'000'000'000);
  const auto refreshed = overview.refresh();
  CHECK(pending(refreshed) == 2);
  CHECK(refreshed.taken_at == 1'700'000'002'000);
  CHECK(pending(overview.read()) == 2);
  CHECK(overview.read().taken_at == 1'700'000'002'000);
}

TEST_CASE("overview: the thread refreshes the snapshot; stop joins it", "[console]") {
  PublisherFixture f("overview_thread");
  f.add_endpoint("m1", "http://127.0.0.1:9/a");
  OverviewSnapshot overview(f.store, f.clock, {0ms, 1ms});
  CHECK(pending(overview.read()) == 0);
  overview.start();
  f.publish("m1", "order.created");
  // Polls (bounded) until the thread's refresh shows the new task; reads never count here.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  std::int64_t seen = 0;
  while ((seen = pending(overview.read())) != 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  CHECK(seen == 1);
  overview.stop();
  overview.stop();  // idempotent
  f.publish("m1", "order.created");
  CHECK(pending(overview.read()) == 1);  // stopped: the snapshot stays
}

}  // namespace
}  // namespace webhooks::test
