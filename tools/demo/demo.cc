// The demo's run (demo_run.h): its secrets, its work directory, its steps in order, and its exit
// code.
#include "demo.h"

#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <iostream>

#include "demo_run.h"
#include "report/report.h"
#include "webhooks/base64.h"
#include "webhooks/random.h"

namespace webhooks::demo {
namespace {

namespace fs = std::filesystem;

std::string random_hex(std::size_t bytes) {
  std::vector<std::uint8_t> buf(bytes);
  secure_random_bytes(buf);
  std::string out;
  char two[3];
  for (std::uint8_t b : buf) {
    std::snprintf(two, sizeof two, "%02x", b);
    out += two;
  }
  return out;
}

std::string new_secret() {
  std::array<std::uint8_t, 32> key{};
  secure_random_bytes(key);
  return "whsec_" + base64_encode(key);
}

}  // namespace

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

Demo::Demo(const Options& options, const std::atomic<bool>& stop)
    : o_(options),
      stop_(stop),
      started_(Clock::now()),
      deadline_(started_ + std::chrono::milliseconds(static_cast<long>(options.timeout_s * 1000))) {
}

void Demo::check() const {
  if (stop_) throw Interrupted();
  if (Clock::now() > deadline_) {
    throw Failure("the demo did not finish within --timeout " +
                  std::to_string(static_cast<int>(o_.timeout_s)) + " s");
  }
}

void Demo::prepare_work_dir() {
  if (o_.work_dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "webhooks-demo-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw Failure("cannot create a work directory under " + fs::temp_directory_path().string());
    }
    work_ = pattern;
    own_work_dir_ = true;
    return;
  }
  work_ = fs::absolute(o_.work_dir);
  fs::create_directories(work_);
  for (const char* db : {"publisher.db", "orders.db", "partner.db", "merchant.db"}) {
    if (fs::exists(work_ / db)) {
      throw Failure("--work-dir " + work_.string() + " already holds " + db +
                    " from an earlier run; give an empty or new directory");
    }
  }
}

fs::path Demo::bin(const std::string& name) const {
  const fs::path path = o_.bin_dir / name;
  if (::access(path.c_str(), X_OK) != 0) {
    throw Failure(path.string() + " is missing or not executable: run `make build` first, or " +
                  "point --bin-dir at the build's bin/ directory");
  }
  return path;
}

// The steps of a run, once it has its work directory; 0 when every invariant holds.
int Demo::run_steps(std::vector<std::string>& failures) {
  start_servers();
  drive_load();
  wait_for_deliveries("deliveries");
  operator_replay();
  collect();
  immature_phase();
  failures = verify();
  stop_servers(failures);
  f_.total_seconds = seconds_since(started_);
  print_table(f_, failures);
  write_summary(o_.summary_path, f_, failures);
  return failures.empty() ? 0 : 1;
}

int Demo::run() {
  try {
    for (const char* name :
         {"webhooks-publisherd", "orders-api", "payout-partner", "merchant-receiver"}) {
      bin(name);
    }
    prepare_work_dir();
  } catch (const Failure& e) {
    std::cerr << "webhooks-demo: " << e.what() << std::endl;
    return 1;
  }
  admin_token_ = random_hex(24);
  api_key_ = "sk_demo_" + random_hex(12);
  secret_ = new_secret();
  std::cout << "webhooks demo: " << o_.orders << " orders and " << o_.payouts << " payouts, "
            << o_.resend_percent << "% sent twice, on 127.0.0.1; logs and databases in "
            << work_.string() << "\n\n";
  std::vector<std::string> failures;
  int code = 1;
  try {
    code = run_steps(failures);
  } catch (const Interrupted&) {
    std::cout << (::isatty(STDOUT_FILENO) ? "\n" : "")
              << "\nwebhooks-demo: interrupted; stopping the servers." << std::endl;
    stop_servers(failures);
    std::cout << "Logs and databases kept in " << work_.string() << std::endl;
    return 130;
  } catch (const std::exception& e) {
    std::cout << (::isatty(STDOUT_FILENO) ? "\n" : "") << std::flush;
    std::cerr << "\nwebhooks-demo: " << e.what() << std::endl;
    failures.insert(failures.begin(), e.what());
    stop_servers(failures);
    f_.total_seconds = seconds_since(started_);
    write_summary(o_.summary_path, f_, failures);
    std::cerr << "Logs and databases kept in " << work_.string() << std::endl;
    return 1;
  }
  if (code == 0 && own_work_dir_ && !o_.keep_work_dir) {
    std::error_code ec;
    fs::remove_all(work_, ec);
  } else {
    std::cout << "  Logs and databases: " << work_.string() << "\n";
  }
  return code;
}

int run_demo(const Options& options, const std::atomic<bool>& stop) {
  Demo demo(options, stop);
  return demo.run();
}

}  // namespace webhooks::demo
