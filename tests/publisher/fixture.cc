#include "fixture.h"

#include "support/test_env.h"
#include "webhooks/secret.h"
#include "webhooks/uuid.h"

namespace webhooks::test {
namespace {

std::unique_ptr<publisher::Publisher> build(
    const std::string& label, const Clock& clock, RandomSource& random,
    const std::function<void(publisher::Options&)>& adjust) {
  publisher::Options options = test_options(database_target(label), clock, random);
  if (adjust) adjust(options);
  return std::make_unique<publisher::Publisher>(std::move(options));
}

}  // namespace

publisher::RetryPolicy test_retry_policy() {
  return publisher::RetryPolicy(
      {std::chrono::seconds(5), std::chrono::seconds(10), std::chrono::seconds(20)},
      std::chrono::hours(1), 0.0);
}

publisher::Options test_options(const std::string& database, const Clock& clock,
                                RandomSource& random) {
  publisher::Options o;
  o.database = database;
  o.clock = &clock;
  o.random = &random;
  o.retry_policy = test_retry_policy();
  o.allow_private_networks = true;
  o.connect_timeout = std::chrono::seconds(2);
  o.timeout = std::chrono::seconds(1);
  o.batch_size = 16;
  o.instance_id = "test";
  return o;
}

PublisherFixture::PublisherFixture(const std::string& label,
                                   const std::function<void(publisher::Options&)>& adjust)
    : publisher(build(label, clock, random, adjust)),
      db(publisher->database()),
      store(publisher->store()),
      metrics(publisher->metrics()),
      dispatcher(publisher->dispatcher()),
      ingest(publisher->ingest()),
      guard(publisher->guard()),
      policy(publisher->options().retry_policy) {}

PublisherFixture::PublisherFixture(const std::string& label, publisher::RetryPolicy retry_policy)
    : PublisherFixture(label, [&retry_policy](publisher::Options& o) {
        o.retry_policy = std::move(retry_policy);
      }) {}

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

publisher::Accepted PublisherFixture::publish(const std::string& merchant, const std::string& type,
                                              const std::string& data) {
  return ingest.publish(merchant, type, data);
}

std::vector<publisher::Task> PublisherFixture::tasks(const std::string& event_id) {
  return store.tasks_of_event(event_id);
}

}  // namespace webhooks::test
