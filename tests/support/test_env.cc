#include "support/test_env.h"

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "webhooks/clock.h"

namespace webhooks::test {

std::string vectors_dir() { return WEBHOOKS_TEST_VECTORS_DIR; }
std::string bin_dir() { return WEBHOOKS_TEST_BIN_DIR; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) FAIL("cannot read " << path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string postgres_url() {
  if (const char* url = std::getenv("WEBHOOKS_TEST_POSTGRES_URL"); url && *url) return url;
  if (const char* file = std::getenv("WEBHOOKS_TEST_POSTGRES_URL_FILE"); file && *file) {
    std::ifstream in(file);
    std::string url;
    if (in && std::getline(in, url) && !url.empty()) return url;
  }
  FAIL(
      "no PostgreSQL server for this test: run it through `make test` or `ctest` (the `postgres` "
      "fixture starts one), or set WEBHOOKS_TEST_POSTGRES_URL=postgresql://user@127.0.0.1:PORT/db");
  return {};
}

db::Engine engine() {
  const char* name = std::getenv("WEBHOOKS_TEST_ENGINE");
  return name && std::string(name) == "postgres" ? db::Engine::postgres : db::Engine::sqlite;
}

namespace {
std::string unique_suffix() {
  static std::atomic<int> counter{0};
  return std::to_string(::getpid()) + "_" + std::to_string(system_clock().now_ms() % 100000000) +
         "_" + std::to_string(counter++);
}
}  // namespace

std::string temp_dir(const std::string& label) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / ("webhooks-" + label + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) FAIL("cannot create a temporary directory");
  return pattern;
}

std::string database_target(const std::string& label) {
  if (engine() == db::Engine::sqlite) return temp_dir(label) + "/" + label + ".db";
  const std::string base = postgres_url();
  std::string name = "t_" + label + "_" + unique_suffix();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  PGconn* conn = PQconnectdb(base.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string message = PQerrorMessage(conn);
    PQfinish(conn);
    FAIL("cannot connect to the test PostgreSQL server: " << message);
  }
  PGresult* res = PQexec(conn, ("CREATE DATABASE " + name).c_str());
  const bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
  const std::string message = PQerrorMessage(conn);
  PQclear(res);
  PQfinish(conn);
  if (!ok) FAIL("CREATE DATABASE " << name << " failed: " << message);
  const std::size_t slash = base.rfind('/');
  const std::size_t query = base.find('?', slash);
  return base.substr(0, slash + 1) + name + (query == std::string::npos ? "" : base.substr(query));
}

std::shared_ptr<db::Database> open_database(const std::string& label,
                                            std::initializer_list<db::Component> components) {
  std::shared_ptr<db::Database> db = db::Database::open(database_target(label));
  db->migrate(components, system_clock().now_ms());
  return db;
}

std::vector<std::string> table_names(db::Database& db) {
  const db::Rows rows = db.exec(
      db.engine() == db::Engine::sqlite
          ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
          : "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() ORDER BY table_name");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < rows.size(); ++i) names.push_back(rows.text(i, 0));
  return names;
}

}  // namespace webhooks::test
