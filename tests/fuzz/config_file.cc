// The daemons' --config file, read by CLI11 through webhooks-publisherd's real options parser
// (publisher/daemon/options.cc, app/flags.cc).
// Input: the text of a config file, written to a temporary file and passed as --config FILE.
// Properties: parse_options never throws (every bad file is a usage error, exit code 2, with
// CLI11's message), and a file it accepts gives options within their documented ranges.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "fuzz_check.h"
#include "options.h"

namespace {

// The file every input is written to: one per process (in $TMPDIR, else /tmp), removed at exit.
// A plain array, not a std::string: the atexit handler runs after static objects are destroyed.
char config_file[4096];

const char* config_path() {
  static const bool made = [] {
    const char* dir = std::getenv("TMPDIR");
    std::snprintf(config_file, sizeof config_file, "%s/webhooks-fuzz-config-XXXXXX",
                  dir != nullptr && *dir != '\0' ? dir : "/tmp");
    const int fd = ::mkstemp(config_file);
    FUZZ_CHECK(fd >= 0);
    ::close(fd);
    std::atexit([] { ::unlink(config_file); });
    return true;
  }();
  (void)made;
  return config_file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using webhooks::publisherd::parse_options;
  {
    std::ofstream out(config_path(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::string arg0 = "webhooks-publisherd", arg1 = "--config", arg2 = config_path();
  char* argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};
  // CLI11 prints a usage error on stderr and --help on stdout: keep both out of the fuzzer's log.
  std::ostringstream sink;
  std::streambuf* const err = std::cerr.rdbuf(sink.rdbuf());
  std::streambuf* const out = std::cout.rdbuf(sink.rdbuf());
  webhooks::publisherd::Parsed parsed;
  try {
    parsed = parse_options(3, argv);
  } catch (const std::exception& e) {
    std::cerr.rdbuf(err);
    std::cout.rdbuf(out);
    std::fprintf(stderr, "parse_options threw: %s\n", e.what());
    FUZZ_CHECK(!"parse_options threw");
  }
  std::cerr.rdbuf(err);
  std::cout.rdbuf(out);
  FUZZ_CHECK(parsed.exit_code == -1 || parsed.exit_code == 0 || parsed.exit_code == 2);
  if (parsed.exit_code == -1) {
    const auto& o = parsed.options;
    FUZZ_CHECK(o.workers >= 1 && o.workers <= 256);
    FUZZ_CHECK(o.max_in_flight >= 1 && o.max_in_flight <= 10'000);
    FUZZ_CHECK(o.batch_size >= 1 && o.batch_size <= 10'000);
    FUZZ_CHECK(o.server.threads >= 1 && o.server.threads <= 4096);
    FUZZ_CHECK(o.body_limit >= 1);
    FUZZ_CHECK(o.ingest_lease.count() > 0 && o.ingest_ttl.count() > 0);
    FUZZ_CHECK(parsed.log_level == "debug" || parsed.log_level == "info" ||
               parsed.log_level == "warn" || parsed.log_level == "error");
    // What the flags accept, the Publisher accepts: its own check does not throw.
    try {
      webhooks::publisher::validate(o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "validate threw: %s\n", e.what());
      FUZZ_CHECK(!"validate refused parsed options");
    }
    for (const int status : o.permanent_statuses) FUZZ_CHECK(status >= 400 && status <= 499);
  }
  return 0;
}
