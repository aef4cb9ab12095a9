// bench_receiver's last part (receiver_bench.h): Receiver::handle in process, no HTTP.
#include <atomic>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

#include "receiver_bench.h"
#include "webhooks/db.h"

namespace receiver_bench {

namespace {

// Runs `threads` threads calling handle() on requests[0..limit) (cycling when `cycle`), for at
// most 2 s; returns calls per second and how many calls were made.
std::pair<double, long> drive(Receiver& receiver, const std::vector<Request>& requests,
                              std::size_t limit, bool cycle, int threads) {
  std::atomic<std::size_t> next{0};
  std::atomic<long> done{0};
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      while (Clock::now() - start < std::chrono::seconds(2)) {
        std::size_t i = next++;
        if (i >= (cycle ? 4 * limit : limit)) break;
        i %= limit;
        const Headers headers = Headers::view(requests[i].headers);  // as headers_of(request)
        const Answer a =
            receiver.handle(headers, requests[i].body, [](const Event&) { return Reply{}; });
        if (a.status != 200)
          std::fprintf(stderr, "unexpected answer %d %s\n", a.status, a.body.c_str());
        ++done;
      }
    });
  }
  for (auto& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return {static_cast<double>(done.load()) / seconds, done.load()};
}

}  // namespace

void in_process(Receiver& receiver, const char* label) {
  for (const int threads : {1, 4}) {
    const auto requests =
        make_requests(std::string(1, label[0]) + std::to_string(threads) + "_", 100'000);
    const auto [fresh, handled] = drive(receiver, requests, requests.size(), false, threads);
    const auto [dups, calls] =
        drive(receiver, requests, static_cast<std::size_t>(handled), true, threads);
    std::printf(
        "  handle() in process, %-18s %d thread%s new events %7.0f /s, duplicates %7.0f /s "
        "(%ld + %ld calls)\n",
        label, threads, threads == 1 ? ": " : "s:", fresh, dups, handled, calls);
  }
}

// Counts of one SQLite file's table, or -1 when it cannot be read.
std::int64_t count_rows(const std::string& path, const std::string& table) {
  try {
    return db::Database::open(path)->exec("SELECT COUNT(*) FROM " + table).integer(0, 0);
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace receiver_bench
