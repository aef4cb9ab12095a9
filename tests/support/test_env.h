// Where tests find their inputs, servers and databases.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "webhooks/db.h"

namespace webhooks::test {

// The conformance vectors copied from the published sets (tests/vectors/).
std::string vectors_dir();
// build/bin, where the servers under test live.
std::string bin_dir();
// The bytes of a file; fails the current test if it cannot be read.
std::string read_file(const std::string& path);
// The URL of the test PostgreSQL server: $WEBHOOKS_TEST_POSTGRES_URL, or the contents of the file
// named by $WEBHOOKS_TEST_POSTGRES_URL_FILE (written by the CTest fixture). Fails the current test,
// saying how to get a server, when neither is available. Never skips.
std::string postgres_url();

// The engine this run tests: $WEBHOOKS_TEST_ENGINE ("sqlite", the default, or "postgres").
db::Engine engine();
// A new, empty database on engine(), as a target for db::Database::open or a server's --db: a
// SQLite file in a fresh temporary directory, or a freshly created PostgreSQL database on the
// test server. `label` goes into the name, for debugging.
std::string database_target(const std::string& label);
// database_target(label), opened, with `components` migrated (e.g. {idempotency::schema()}; {}
// for none: only the bookkeeping table webhooks_migrations).
std::shared_ptr<db::Database> open_database(const std::string& label,
                                            std::initializer_list<db::Component> components);
// The names of the database's tables, sorted (SQLite's own sqlite_* tables left out; PostgreSQL:
// those of the current schema).
std::vector<std::string> table_names(db::Database& db);
// A fresh temporary directory (removed by the OS's /tmp cleaning, not by the test).
std::string temp_dir(const std::string& label);

}  // namespace webhooks::test
