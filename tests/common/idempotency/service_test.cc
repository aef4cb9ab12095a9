// idempotency::Service, the core built in one place for the publisher, orders-api and the
// receiver: its settings reach the store, its guard options the guard, and the guard's records
// are the store's.
#include "webhooks/idempotency/service.h"

#include <catch2/catch.hpp>

#include "support/test_env.h"
#include "webhooks/idempotency/schema.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using namespace std::chrono_literals;

namespace {

constexpr UnixMillis kT0 = 1'700'000'000'000;

ServiceOptions options(bool key_required) {
  ServiceOptions o;
  o.settings = {5s, 1h};
  o.guard.key_required = key_required;
  o.maintenance_interval = 0ms;
  return o;
}

}  // namespace

TEST_CASE("the service's guard writes the records its store reads") {
  FakeClock clock{kT0};
  Service service(test::open_database("service", {idempotency::schema()}), clock, options(true));
  CHECK(service.store().settings().lease == 5s);
  CHECK(service.store().settings().ttl == 1h);
  CHECK(&service.group() == &service.guard().group());

  int runs = 0;
  const auto post = [&](std::optional<std::string_view> key) {
    return service.guard().run("m1", key, "POST", "/orders", R"({"amount":100})", [&](Attempt&) {
      ++runs;
      return Response{201, {}, R"({"id":"o1"})"};
    });
  };
  CHECK(post("k1").status == 201);
  CHECK(post("k1").status == 201);  // the replay
  CHECK(runs == 1);
  const std::optional<RecordView> record = service.store().lookup("m1", "k1", kT0);
  REQUIRE(record.has_value());
  CHECK(record->state == State::completed);
  CHECK(record->status == 201);
  CHECK(record->expires_at == kT0 + 3'600'000);
  CHECK(post(std::nullopt).status == 400);  // a key is required
  CHECK(runs == 1);

  service.start_maintenance(1h);  // a loop that runs, then stops with the service
  service.stop_maintenance();
  service.start_maintenance(1h);
}

TEST_CASE("the service's guard options reach the guard") {
  FakeClock clock{kT0};
  Service service(test::open_database("service_optional", {idempotency::schema()}), clock,
                  options(false));
  int runs = 0;
  for (int i = 0; i < 2; ++i) {
    const Response r =
        service.guard().run("m1", std::nullopt, "POST", "/orders", "{}", [&](Attempt&) {
          ++runs;
          return Response{201, {}, "{}"};
        });
    CHECK(r.status == 201);
  }
  CHECK(runs == 2);  // without a key each request runs
}
