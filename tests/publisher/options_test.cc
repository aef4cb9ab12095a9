// publisher::Options holds every default of the Publisher; the components' own option structs
// must agree with it, so that a component built alone behaves as inside a Publisher.
#include "webhooks/publisher/options.h"

#include <catch2/catch.hpp>

#include "api/admin_api.h"
#include "delivery/dispatcher.h"
#include "delivery/http_delivery.h"

namespace webhooks::publisher {
namespace {

using namespace std::chrono_literals;

TEST_CASE("Options' defaults are the components' defaults", "[options]") {
  const Options o;
  const DispatcherOptions dispatch;
  CHECK(o.workers == 4);
  CHECK(dispatch.workers == o.workers);
  CHECK(o.batch_size == 32);
  CHECK(dispatch.batch_size == o.batch_size);
  CHECK(dispatch.lease == o.delivery_lease);
  CHECK(dispatch.poll_interval == o.poll_interval);
  CHECK(dispatch.disable_after == o.disable_after);
  const HttpDeliveryOptions http;
  CHECK(http.max_in_flight == static_cast<std::size_t>(o.max_in_flight));
  CHECK(http.connect_timeout == o.connect_timeout);
  CHECK(http.total_timeout == o.timeout);
  CHECK(http.allow_private_networks == o.allow_private_networks);
  const AdminOptions admin;
  CHECK(admin.rotation_grace == o.rotation_grace);
  CHECK(admin.replay_max_age == o.replay_max_age);
  CHECK(admin.body_limit == o.body_limit);
  CHECK(o.retry_policy.schedule_text() == RetryPolicy::kDefaultSchedule);
  CHECK(o.retry_policy.max_age() == 72h);
}

TEST_CASE("the defaults pass validate(); the lease check counts the batch's rounds", "[options]") {
  Options o;
  CHECK_NOTHROW(validate(o));
  CHECK(endpoint_connections_per_worker(o) == 8);  // 32 connections / 4 workers
  CHECK(batch_rounds(o) == 4);                     // 32 tasks, 8 at a time
  o.delivery_lease = 60s;                          // exactly 4 x 15 s: not longer
  CHECK_THROWS_WITH(validate(o),
                    "publisher options: delivery_lease (60000 ms) must be longer than timeout "
                    "(15000 ms) times the 4 round(s) a batch may need");
  o.delivery_lease = 2min;
  o.permanent_statuses = {404, 429};
  CHECK_THROWS_WITH(validate(o),
                    "publisher options: permanent_statuses: 429 cannot be permanent (only 4xx "
                    "but 408, 410, 425 and 429)");
  o.permanent_statuses = {404};
  o.rotation_grace = -1ms;
  CHECK_THROWS_WITH(validate(o),
                    "publisher options: rotation_grace must not be negative, not -1 ms");
}

}  // namespace
}  // namespace webhooks::publisher
