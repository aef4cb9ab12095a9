// Where tests find their inputs and servers.
#pragma once

#include <string>

namespace webhooks::test {

// The conformance vectors copied from the published sets (tests/vectors/).
std::string vectors_dir();
// The bytes of a file; fails the current test if it cannot be read.
std::string read_file(const std::string& path);
// The URL of the test PostgreSQL server: $WEBHOOKS_TEST_POSTGRES_URL, or the contents of the file
// named by $WEBHOOKS_TEST_POSTGRES_URL_FILE (written by the CTest fixture). Fails the current test,
// saying how to get a server, when neither is available. Never skips.
std::string postgres_url();

}  // namespace webhooks::test
