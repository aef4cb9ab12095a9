// An in-process Publisher (publisher.h) on the engine under test, built from Options as the daemon
// builds it, with a fake clock and seeded jitter: delivery over real HTTP (HttpTransport on
// loopback), driven by dispatcher.run_once() without start(): no threads, no sleeping.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/ingest.h"
#include "delivery/dispatcher.h"
#include "ops/metrics.h"
#include "webhooks/clock.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/publisher/options.h"
#include "webhooks/publisher/publisher.h"
#include "webhooks/publisher/store.h"
#include "webhooks/random.h"

namespace webhooks::test {

// The retry schedule of most tests: 5s,10s,20s (4 attempts), max age 1 h, no jitter.
publisher::RetryPolicy test_retry_policy();

// The fixture's Options on `database`: `clock`, `random`, the test retry policy, loopback
// delivery (allow_private_networks, connect timeout 2 s, attempt timeout 1 s), batch size 16,
// instance id "test".
publisher::Options test_options(const std::string& database, const Clock& clock,
                                RandomSource& random);

struct PublisherFixture {
  // test_options() on a fresh database_target(label), then `adjust` (when given) changes them.
  explicit PublisherFixture(const std::string& label,
                            const std::function<void(publisher::Options&)>& adjust = {});
  PublisherFixture(const std::string& label, publisher::RetryPolicy policy);

  // Creates an enabled endpoint with a new secret; returns it (secrets[0].secret is the key).
  publisher::Endpoint add_endpoint(const std::string& merchant, const std::string& url,
                                   std::vector<std::string> types = {});
  publisher::Accepted publish(const std::string& merchant, const std::string& type,
                              const std::string& data = R"({"amount":100})");
  std::vector<publisher::Task> tasks(const std::string& event_id);
  void advance(std::chrono::milliseconds by) { clock.advance(by); }

  FakeClock clock;
  SeededRandom random{42};
  std::unique_ptr<publisher::Publisher> publisher;
  // Its parts.
  db::Database& db;
  publisher::Store& store;
  publisher::Metrics& metrics;
  publisher::Dispatcher& dispatcher;
  publisher::Ingest& ingest;
  idempotency::Guard& guard;
  const publisher::RetryPolicy& policy;
};

}  // namespace webhooks::test
