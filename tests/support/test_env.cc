#include "support/test_env.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace webhooks::test {

std::string vectors_dir() { return WEBHOOKS_TEST_VECTORS_DIR; }

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
  FAIL("no PostgreSQL server for this test: run it through `make test` or `ctest` (the `postgres` "
       "fixture starts one), or set WEBHOOKS_TEST_POSTGRES_URL=postgresql://user@127.0.0.1:PORT/db");
  return {};
}

}  // namespace webhooks::test
