// An in-process publisher on the engine under test with a fake clock: store, ingest, dispatcher
// over real HTTP (HttpTransport on loopback), driven by run_once() — no threads, no sleeping.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "webhooks/clock.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/idempotency/lease_keeper.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/publisher/dispatcher.h"
#include "webhooks/publisher/http_transport.h"
#include "webhooks/publisher/ingest.h"
#include "webhooks/publisher/store.h"
#include "webhooks/random.h"

namespace webhooks::test {

struct PublisherFixture {
  // Retry schedule 5s,10s,20s (4 attempts), max age 1 h, no jitter.
  explicit PublisherFixture(const std::string& label,
                            publisher::RetryPolicy policy = publisher::RetryPolicy(
                                {std::chrono::seconds(5), std::chrono::seconds(10),
                                 std::chrono::seconds(20)},
                                std::chrono::hours(1), 0.0));

  // Creates an enabled endpoint with a new secret; returns it (secrets[0].secret is the key).
  publisher::Endpoint add_endpoint(const std::string& merchant, const std::string& url,
                                   std::vector<std::string> types = {});
  publisher::Accepted publish(const std::string& merchant, const std::string& type,
                              const std::string& data = R"({"amount":100})");
  std::vector<publisher::Task> tasks(const std::string& event_id);
  void advance(std::chrono::milliseconds by) { clock.advance(by); }

  FakeClock clock;
  std::shared_ptr<db::Database> db;
  publisher::Store store;
  publisher::Metrics metrics;
  publisher::RetryPolicy policy;
  SeededRandom random{42};
  publisher::HttpTransport transport;
  std::unique_ptr<publisher::Dispatcher> dispatcher;
  publisher::Ingest ingest;
  idempotency::Store records;
  std::unique_ptr<idempotency::LeaseKeeper> keeper;
  std::unique_ptr<idempotency::Guard> guard;
};

}  // namespace webhooks::test
