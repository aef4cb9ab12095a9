#include "fixture.h"

#include "support/test_env.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/publisher/schema.h"
#include "webhooks/secret.h"
#include "webhooks/uuid.h"

namespace webhooks::test {
namespace {

publisher::HttpDeliveryOptions loopback_options() {
  publisher::HttpDeliveryOptions o;
  o.allow_private_networks = true;
  o.connect_timeout = std::chrono::seconds(2);
  o.total_timeout = std::chrono::seconds(1);
  return o;
}

}  // namespace

PublisherFixture::PublisherFixture(const std::string& label, publisher::RetryPolicy retry_policy)
    : db(open_database(label, {idempotency::schema(), publisher::schema()})),
      store(db),
      policy(std::move(retry_policy)),
      transport(loopback_options()),
      ingest(store, clock, metrics),
      records(db) {
  publisher::DispatcherOptions options;
  options.batch_size = 16;
  options.instance_id = "test";
  dispatcher = std::make_unique<publisher::Dispatcher>(store, transport, policy, clock, random,
                                                       metrics, options);
  keeper = std::make_unique<idempotency::LeaseKeeper>(records, clock);
  guard = std::make_unique<idempotency::Guard>(records, *keeper, clock);
}

publisher::Endpoint PublisherFixture::add_endpoint(const std::string& merchant,
                                                   const std::string& url,
                                                   std::vector<std::string> types) {
  UuidV7Generator ids(clock);
  publisher::Endpoint e;
  e.id = ids.next();
  e.merchant_id = merchant;
  e.url = url;
  e.event_types = std::move(types);
  e.created_at = e.updated_at = clock.now_ms();
  e.secrets.push_back({Secret::generate().to_string(), clock.now_ms(), std::nullopt});
  store.create_endpoint(e);
  return e;
}

publisher::Accepted PublisherFixture::publish(const std::string& merchant,
                                              const std::string& type, const std::string& data) {
  return ingest.publish(merchant, type, data);
}

std::vector<publisher::Task> PublisherFixture::tasks(const std::string& event_id) {
  return store.tasks_of_event(event_id);
}

}  // namespace webhooks::test
