// Answers stored by reference (Response::rendered_from, ReplayRenderer; issue 30) on the engine
// named by WEBHOOKS_TEST_ENGINE: what the record holds, replays byte for byte through every read
// path (begin, begin in a transaction, begin_deferred, peek, find, lookup, the guard), and the
// errors: rows gone, no renderer, a reference too long.
#include <atomic>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "store_fixture.h"
#include "support/test_env.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using namespace webhooks::test;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view kRoute = "POST /things";
// A body with what a renderer must give back exactly: an escaped quote, a backslash, UTF-8.
const std::string kBody = R"({"id":"t1","name":"caf\u00e9 \"x\" \\ é"})";

// A thing's answer: 201, Location /things/ID, {"id":ID,"name":NAME} as stored in `things`; the
// reference is the thing's id.
Response thing_answer(const std::string& id, const std::string& body) {
  Response answer{201, {{"Location", "/things/" + id}}, body};
  answer.rendered_from = id;
  return answer;
}

// Renders a thing's answer from the `things` table (id, body), for route kRoute and status 201.
class Things final : public ReplayRenderer {
 public:
  std::optional<Response> render(db::Statements& db, std::string_view route, int status,
                                 std::string_view rendered_from) const override {
    ++calls;
    if (route != kRoute || status != 201) return std::nullopt;
    const db::Rows rows = db.read("SELECT body FROM things WHERE id = $1", {rendered_from});
    if (rows.empty()) return std::nullopt;
    return thing_answer(std::string(rendered_from), rows.text(0, 0));
  }
  std::optional<std::string> resource_id(std::string_view rendered_from) const override {
    return "thing " + std::string(rendered_from);
  }
  mutable std::atomic<int> calls{0};
};

struct RenderFixture {
  std::shared_ptr<db::Database> db = test::open_database("rendered", {idempotency::schema()});
  std::shared_ptr<Things> things = std::make_shared<Things>();
  Store store{db, Settings{30s, 24h, things}};

  RenderFixture() {
    db->exec("CREATE TABLE things (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
    db->exec("INSERT INTO things (id, body) VALUES ('t1', $1)", {kBody});
  }

  // `key` begun on kRoute at kT0 and completed with thing t1's answer.
  void complete_t1(const std::string& key) {
    const BeginResult begun = store.begin("m1", key, kFp, kT0, kRoute);
    REQUIRE(begun.outcome == BeginOutcome::acquired);
    REQUIRE(store.complete(begun.lease, thing_answer("t1", kBody), kT0 + 5));
  }

  // response_status, response_headers, response_body, response_ref of `key`, NULL as "NULL".
  std::vector<std::string> stored(const std::string& key) {
    const db::Rows rows = db->exec(
        "SELECT response_status, response_headers, response_body, response_ref FROM "
        "idempotency_records WHERE scope = 'm1' AND idempotency_key = $1",
        {key});
    REQUIRE(rows.size() == 1);
    std::vector<std::string> out;
    for (std::size_t c = 0; c < 4; ++c)
      out.push_back(rows.is_null(0, c) ? "NULL" : rows.text(0, c));
    return out;
  }
};

// `response` is thing t1's answer, byte for byte.
void check_t1(const std::optional<Response>& response) {
  REQUIRE(response);
  CHECK(response->status == 201);
  CHECK(response->headers ==
        std::vector<std::pair<std::string, std::string>>{{"Location", "/things/t1"}});
  CHECK(response->body == kBody);
  CHECK(response->rendered_from == "t1");
}

}  // namespace

TEST_CASE("an answer with rendered_from is stored as its reference and replayed byte for byte") {
  RenderFixture f;
  f.complete_t1("k1");
  CHECK(f.stored("k1") == std::vector<std::string>{"201", "NULL", "NULL", "t1"});

  const BeginResult again = f.store.begin("m1", "k1", kFp, kT0 + 10, kRoute);
  CHECK(again.outcome == BeginOutcome::replay);
  check_t1(again.response);
  f.db->transact([&](db::Transaction& tx) {
    check_t1(f.store.begin(tx, "m1", "k1", kFp, kT0 + 10, kRoute).response);
    check_t1(f.store.begin_deferred(tx, "m1", "k1", kFp, kT0 + 10, kRoute).response);
  });
  check_t1(f.store.peek("m1", "k1", kFp, kT0 + 10).response);
  const std::optional<Record> record = f.store.find("m1", "k1");
  REQUIRE(record);
  check_t1(record->response);
  CHECK(record->rendered_from == "t1");
  // Another body is still a mismatch, read without rendering.
  const int calls = f.things->calls;
  CHECK(f.store.begin("m1", "k1", kOther, kT0 + 10, kRoute).outcome == BeginOutcome::mismatch);
  CHECK(f.things->calls == calls);

  const std::optional<RecordView> view = f.store.lookup("m1", "k1", kT0 + 10);
  REQUIRE(view);
  CHECK(view->resource_id == "thing t1");
  CHECK(view->status == 201);
}

TEST_CASE("complete_begun stores by reference too, in place of an expired record") {
  RenderFixture f;
  f.db->exec("INSERT INTO things (id, body) VALUES ('t2', '{\"id\":\"t2\"}')");
  f.complete_t1("k1");
  const UnixMillis later = kT0 + 24 * 3600 * 1000 + 1;  // k1 expired: a new request
  f.db->transact([&](db::Transaction& tx) {
    const BeginResult begun = f.store.begin_deferred(tx, "m1", "k1", kFp, later, kRoute);
    REQUIRE(begun.outcome == BeginOutcome::acquired);
    REQUIRE(f.store.complete_begun(tx, begun, kFp, thing_answer("t2", "{\"id\":\"t2\"}"), later));
  });
  CHECK(f.stored("k1") == std::vector<std::string>{"201", "NULL", "NULL", "t2"});
  const BeginResult again = f.store.begin("m1", "k1", kFp, later + 1, kRoute);
  CHECK(again.outcome == BeginOutcome::replay);
  REQUIRE(again.response);
  CHECK(again.response->body == "{\"id\":\"t2\"}");
  CHECK(again.response->headers ==
        std::vector<std::pair<std::string, std::string>>{{"Location", "/things/t2"}});
}

TEST_CASE("without a renderer, rendered_from is ignored and the answer stored whole") {
  RenderFixture f;
  Store plain{f.db, Settings{30s, 24h}};
  const BeginResult begun = plain.begin("m1", "k1", kFp, kT0, kRoute);
  REQUIRE(plain.complete(begun.lease, thing_answer("t1", kBody), kT0 + 5));
  CHECK(f.stored("k1") ==
        std::vector<std::string>{"201", R"([["Location","/things/t1"]])", kBody, "NULL"});
  const BeginResult again = plain.begin("m1", "k1", kFp, kT0 + 10, kRoute);
  REQUIRE(again.response);
  CHECK(again.response->body == kBody);
  CHECK(again.response->rendered_from.empty());
  // A store with a renderer replays such a record as stored, without calling it.
  const BeginResult whole = f.store.begin("m1", "k1", kFp, kT0 + 10, kRoute);
  REQUIRE(whole.response);
  CHECK(whole.response->headers ==
        std::vector<std::pair<std::string, std::string>>{{"Location", "/things/t1"}});
  CHECK(whole.response->body == kBody);
  CHECK(f.things->calls == 0);
}

TEST_CASE("a record whose rows are gone, or read without a renderer, is an error, never a run") {
  RenderFixture f;
  f.complete_t1("k1");
  Store plain{f.db, Settings{30s, 24h}};
  CHECK_THROWS_MATCHES(plain.begin("m1", "k1", kFp, kT0 + 10, kRoute), Error,
                       Catch::Predicate<Error>([](const Error& e) {
                         return e.code() == ErrorCode::invalid_argument &&
                                std::string(e.what()).find("no ReplayRenderer") !=
                                    std::string::npos;
                       }));
  f.db->exec("DELETE FROM things WHERE id = 't1'");
  CHECK_THROWS_MATCHES(f.store.begin("m1", "k1", kFp, kT0 + 10, kRoute), Error,
                       Catch::Predicate<Error>([](const Error& e) {
                         return e.code() == ErrorCode::invalid_argument &&
                                std::string(e.what()).find("rows it names are gone") !=
                                    std::string::npos;
                       }));
  CHECK_THROWS_AS(f.store.peek("m1", "k1", kFp, kT0 + 10), Error);
  // Nothing changed: still completed by reference; find shows it without an answer.
  const std::optional<Record> record = f.store.find("m1", "k1");
  REQUIRE(record);
  CHECK(record->state == State::completed);
  CHECK_FALSE(record->response);
  CHECK(record->rendered_from == "t1");
  CHECK(f.stored("k1") == std::vector<std::string>{"201", "NULL", "NULL", "t1"});
}

TEST_CASE("a reference over kMaxRenderedFrom bytes is refused and nothing is written") {
  RenderFixture f;
  const BeginResult begun = f.store.begin("m1", "k1", kFp, kT0, kRoute);
  Response answer = thing_answer("t1", kBody);
  answer.rendered_from = std::string(kMaxRenderedFrom + 1, 'x');
  CHECK_THROWS_MATCHES(f.store.complete(begun.lease, answer, kT0 + 5), Error,
                       Catch::Predicate<Error>(
                           [](const Error& e) { return e.code() == ErrorCode::invalid_argument; }));
  CHECK(f.store.find("m1", "k1")->state == State::in_progress);
  answer.rendered_from = std::string(kMaxRenderedFrom, 'x');  // the longest allowed
  CHECK(f.store.complete(begun.lease, answer, kT0 + 5));
  CHECK(f.stored("k1")[3] == std::string(kMaxRenderedFrom, 'x'));
}

TEST_CASE("the guard replays a rendered answer from the database; rows gone: 500, never re-run") {
  RenderFixture f;
  FakeClock clock{kT0};
  LeaseKeeper keeper{f.store, clock, 1h};
  int runs = 0;
  const auto post = [&](Guard& guard) {
    return guard.run_in_transaction("m1", "k1", "POST", "/things", "{}",
                                    [&](db::Transaction&, const BeginResult&) {
                                      ++runs;
                                      return thing_answer("t1", kBody);
                                    });
  };
  {
    Guard first{f.store, keeper, clock};
    const Response created = post(first);
    CHECK(created.status == 201);
    CHECK(created.body == kBody);
  }
  CHECK(f.stored("k1") == std::vector<std::string>{"201", "NULL", "NULL", "t1"});
  Guard fresh{f.store, keeper, clock};  // an empty replay cache: the answer comes from the record
  const Response replayed = post(fresh);
  CHECK(replayed.status == 201);
  CHECK(replayed.headers == std::vector<std::pair<std::string, std::string>>{
                                {"Location", "/things/t1"}, {"Idempotent-Replayed", "true"}});
  CHECK(replayed.body == kBody);
  CHECK(runs == 1);

  f.db->exec("DELETE FROM things WHERE id = 't1'");
  Guard after{f.store, keeper, clock};
  const Response broken = post(after);
  CHECK(broken.status == 500);
  CHECK(nlohmann::json::parse(broken.body)["error"]["code"] == "internal_error");
  CHECK(runs == 1);
  CHECK(f.stored("k1") == std::vector<std::string>{"201", "NULL", "NULL", "t1"});
}
