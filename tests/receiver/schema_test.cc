// A merchant who embeds only the receiver gets only its dedup records in their database: one
// table, idempotency_records, beside the migrations bookkeeping. On the engine named by
// WEBHOOKS_TEST_ENGINE.
#include "receiver_support.h"

using namespace receiver_test;

TEST_CASE("a receiver's database holds only its dedup records") {
  FakeClock clock{kNow * 1000};
  const std::vector<std::string> expected = {"idempotency_records", "webhooks_migrations"};
  SECTION("the store it opens from config.store") {
    Config config = test_config(clock);
    config.store = test::database_target("receiver_own_store");
    {
      Receiver receiver(config);
      const Answer answer =
          receiver.handle(signed_headers("evt_1", event_body("evt_1")), event_body("evt_1"),
                          [](const Event&) { return Reply{}; });
      CHECK(answer.status == 200);
    }
    auto db = db::Database::open(config.store);
    CHECK(test::table_names(*db) == expected);
    CHECK(db->exec("SELECT COUNT(*) FROM idempotency_records").integer(0, 0) == 1);
  }
  SECTION("the merchant's own database: its tables kept, no other toolkit table added") {
    std::shared_ptr<db::Database> db =
        db::Database::open(test::database_target("receiver_merchant_db"));
    db->exec("CREATE TABLE shipments (id TEXT PRIMARY KEY)");
    Receiver receiver(test_config(clock), db);
    CHECK(test::table_names(*db) ==
          std::vector<std::string>{"idempotency_records", "shipments", "webhooks_migrations"});
  }
}
