// The CTest fixture's PostgreSQL server is reachable on 127.0.0.1: the base every PostgreSQL test
// relies on.
#include <libpq-fe.h>

#include <catch2/catch.hpp>

#include "support/test_env.h"

TEST_CASE("the test PostgreSQL server answers on loopback") {
  const std::string url = webhooks::test::postgres_url();
  PGconn* conn = PQconnectdb(url.c_str());
  INFO(PQerrorMessage(conn));
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  PGresult* res =
      PQexec(conn, "SELECT 40 + 2, current_setting('server_version_num')::int >= 150000");
  REQUIRE(PQresultStatus(res) == PGRES_TUPLES_OK);
  CHECK(std::string(PQgetvalue(res, 0, 0)) == "42");
  CHECK(std::string(PQgetvalue(res, 0, 1)) == "t");
  PQclear(res);
  PQfinish(conn);
}
