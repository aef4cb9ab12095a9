// The receiver over HTTP on loopback (64 keep-alive connections, every request a new signed
// event, then the same requests again as duplicates) beside a bare cpp-httplib server with the same
// pool and keep-alive settings answering 200 to the same requests, in the same run: each server
// line is kRounds rounds of (bare server, then that server), medians, and the median of the
// rounds' ratios, so this shared machine's load hits both alike. Issue 13's targets are printed
// met/MISSED for
//   - the real build/bin/merchant-receiver process (transactional mode: its effect row and its
//     merchant_calls row commit with the dedup record, grouped), measured from outside, on a
//     SQLite file in a temporary directory, its JSON log lines (stderr) going to a file;
//   - the library's non-transactional path (Receiver + mount on webhooks::http::Server) on SQLite,
//     labelled with the claim mode Config::claims resolves to (in-process: this process holds the
//     file alone);
// and, for information, the same on PostgreSQL with durable claims when
// WEBHOOKS_BENCH_POSTGRES_URL is set (scripts/bench starts a durable server), and
// Receiver::handle in process. SQLite synchronous=NORMAL (db::Options' default) throughout.
// Progress on stderr ("[receiver_bench] <phase>"), so a profiler can wait for a phase.
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench_util.h"
#include "http_load.h"
#include "sample_order.h"
#include "webhooks/db.h"
#include "webhooks/launcher/child_process.h"
#include "webhooks/log.h"
#include "webhooks/receiver/http_server.h"
#include "webhooks/secret.h"
#include "webhooks/signer.h"

namespace {

using namespace webhooks;
using namespace webhooks::receiver;
using Clock = std::chrono::steady_clock;

constexpr int kConnections = 64;
constexpr int kPerConnection = 300;                     // requests per connection per phase
constexpr auto kPhaseBudget = std::chrono::seconds(8);  // and at most this long per phase
// Rounds per server line: the bare server, then the server measured, alternately, so the load of
// this shared machine hits both alike; medians of the rounds, ratio = median of the rounds' ratios.
constexpr int kRounds = 3;
const std::string kSecretText = Secret::generate().to_string();

using Request = bench::HttpRequest;
using Figures = bench::HttpLoad;

std::vector<Request> make_requests(const std::string& prefix, int count) {
  const Signer signer(Secret::parse(kSecretText));
  const std::int64_t ts = system_clock().now_seconds();
  std::vector<Request> out;
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    const std::string id = prefix + std::to_string(i);
    Request r;
    r.path = "/webhooks";
    r.body = nlohmann::json{{"id", id},
                            {"type", "order.captured"},
                            {"timestamp", "2026-11-30T21:00:00Z"},
                            {"data", bench::sample_order(i)}}
                 .dump();
    r.headers = {{"webhook-id", id},
                 {"webhook-timestamp", std::to_string(ts)},
                 {"webhook-signature", signer.sign(id, ts, r.body)},
                 {"webhook-delivery-id", "dlv_" + std::to_string(i)}};
    out.push_back(std::move(r));
  }
  return out;
}

// kConnections keep-alive clients, each sending its slice of `requests` (bench/http_load.h).
Figures load(int port, const std::vector<Request>& requests) {
  return bench::http_load(port, requests, kConnections, kPhaseBudget, 200);
}

// One server measured in kRounds rounds, each right after the bare server on the same requests.
struct Rounds {
  std::vector<Figures> bare, fresh, dup;
};

// Median over the rounds of ours / bare.
double ratio_of(const std::vector<Figures>& ours, const std::vector<Figures>& bare) {
  std::vector<double> r;
  for (std::size_t i = 0; i < ours.size() && i < bare.size(); ++i) {
    r.push_back(ours[i].per_second / bare[i].per_second);
  }
  return r.empty() ? 0 : bench::median(r);
}

// kRounds rounds on fresh keys `prefix`<round>_<i>: the bare server, then `port` (new events),
// then `port` again with the same requests (duplicates) when `duplicates`.
Rounds measure(int bare_port, int port, const std::string& prefix, bool duplicates) {
  Rounds out;
  for (int r = 0; r < kRounds; ++r) {
    const auto requests =
        make_requests(prefix + std::to_string(r) + "_", kConnections * kPerConnection);
    out.bare.push_back(load(bare_port, requests));
    out.fresh.push_back(load(port, requests));
    if (duplicates) out.dup.push_back(load(port, requests));
  }
  return out;
}

void print(const std::string& name, const Figures& f, double ratio) {
  std::printf("  %-52s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%ld requests, %ld not 200)",
              name.c_str(), f.per_second, f.p50_ms, f.p99_ms, f.done, f.failed);
  if (ratio > 0) std::printf("  %.2fx bare", ratio);
  std::printf("\n");
}

// "    target: <what> -> met" (or MISSED); returns whether it was met.
bool target(const std::string& what, bool met) {
  std::printf("    target: %-60s -> %s\n", what.c_str(), met ? "met" : "MISSED");
  return met;
}

// A server's lines: its bare rounds, new events and duplicates with their ratios to the bare
// server; with `targets`, issue 13's: new events >= 0.6x bare with p99 < 10 ms, duplicates >=
// 0.7x bare, every answer 200.
void report(const std::string& name, const Rounds& m, bool targets) {
  print("bare cpp-httplib server, its rounds (baseline)", bench::median_load(m.bare), 0);
  const Figures fresh = bench::median_load(m.fresh), dup = bench::median_load(m.dup);
  const double fresh_ratio = ratio_of(m.fresh, m.bare), dup_ratio = ratio_of(m.dup, m.bare);
  print(name + ", new events", fresh, fresh_ratio);
  if (!m.dup.empty()) print(name + ", duplicates", dup, dup_ratio);
  if (!targets) return;
  target("new events >= 0.6x bare, all 200", fresh_ratio >= 0.6 && fresh.failed == 0);
  target("new events p99 < 10 ms", fresh.p99_ms < 10);
  target("duplicates >= 0.7x bare, all 200", dup_ratio >= 0.7 && dup.failed == 0);
}

void progress(const char* phase) {
  std::fprintf(stderr, "[receiver_bench] %s\n", phase);
  std::fflush(stderr);
}

// --- build/bin/merchant-receiver as a child process, stdout and stderr (its JSON log lines) in
// files of `dir` ---
template <typename S>
struct Served {
  S server;
  int port = 0;
  std::thread thread;
  explicit Served(const ServerTuning& tuning, const std::function<void(S&)>& setup) {
    setup(server);
    port = bind_server(server, "127.0.0.1", 0, tuning);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~Served() {
    server.stop();
    thread.join();
  }
};

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

}  // namespace

// `bench_receiver [PART...]` runs only the parts named (loop, merchant, library, postgres,
// in-process); all by default.
int main(int argc, char** argv) {
  const auto part = [&](std::string_view name) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; ++i) {
      if (name == argv[i]) return true;
    }
    return false;
  };
  spdlog::set_level(spdlog::level::warn);
  const std::string dir = "/tmp/webhooks-receiver-bench-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  Config config;
  config.secrets = {kSecretText};
  config.consumer = "bench";
  config.store = dir + "/dedup.db";  // SQLite, synchronous=NORMAL (db::Options' default)
  config.maintenance_interval = std::chrono::milliseconds(0);
  Receiver receiver(config);
  const std::string claim_mode = receiver.durable_claims() ? "durable claims" : "in-process claims";

  const ServerTuning tuning;  // the same for every server in this process
  std::printf(
      "receiver over HTTP: %d keep-alive connections on loopback, every request a new signed "
      "event, then the same again (duplicates); %d requests each per phase (at most %lld s), "
      "%d cores\n",
      kConnections, kPerConnection, static_cast<long long>(kPhaseBudget.count()),
      static_cast<int>(std::thread::hardware_concurrency()));
  std::printf(
      "  servers: tcp_nodelay on, %zu pool threads, keep_alive_max_count %zu, backlog %d; "
      "SQLite synchronous=%s; every answer sent after its record is committed\n",
      tuning.threads, tuning.keep_alive_max_count, tuning.backlog,
      config.database.sqlite_synchronous.c_str());

  // The bare server runs throughout; every line below alternates with it.
  Served<httplib::Server> bare(tuning, [](httplib::Server& s) {
    s.Post("/webhooks", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"received\":true}", "application/json");
    });
  });
  load(bare.port, make_requests("warm_", kConnections * 20));  // warm-up
  Rounds loop, loop_fibers, merchant, library, library_fibers, on_pg;
  http::ServerTuning on_fibers = tuning;  // fiber workers, one thread per core
  on_fibers.fiber_threads = std::max(1u, std::thread::hardware_concurrency());
  if (part("loop")) {
    // The same route on webhooks::http::Server (event loop + workers), body limit included.
    progress("http::Server");
    const auto same_route = [](http::Server& s) {
      http::limit_request_bodies(s, http::kDefaultBodyLimit);
      s.Post("/webhooks", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("{\"received\":true}", "application/json");
      });
    };
    Served<http::Server> same(tuning, same_route);
    load(same.port, make_requests("warm_", kConnections * 20));
    loop = measure(bare.port, same.port, "loop", false);
    Served<http::Server> same_on_fibers(on_fibers, same_route);
    load(same_on_fibers.port, make_requests("warm_", kConnections * 20));
    loop_fibers = measure(bare.port, same_on_fibers.port, "loopf", false);
  }

  // merchant-receiver, the real process, measured from outside.
  const std::filesystem::path merchant_bin = webhooks::launcher::bin_dir() / "merchant-receiver";
  const std::string merchant_db = dir + "/merchant.db";
  std::string merchant_note;
  if (!part("merchant")) {
    merchant_note = "not measured (not asked for)";
  } else if (!std::filesystem::exists(merchant_bin)) {
    merchant_note = "skipped: build/bin/merchant-receiver not found (build the examples)";
  } else {
    progress("merchant-receiver");
    webhooks::launcher::Options options;
    options.label = "merchant-receiver";
    webhooks::launcher::ChildProcess child(
        merchant_bin, {"--listen", "127.0.0.1:0", "--db", merchant_db, "--secret", kSecretText},
        dir, options);
    try {
      child.wait_listening();
    } catch (const webhooks::launcher::Error& e) {
      merchant_note = std::string("skipped: ") + e.what();
    }
    if (child.port() != 0) {
      load(child.port(), make_requests("warm_", kConnections * 20));
      merchant = measure(bare.port, child.port(), "mr", true);
      merchant_note = "its JSON log to a file, " +
                      std::to_string(std::filesystem::file_size(child.err_path()) / 1000) + " kB";
    }
  }

  // The library's non-transactional path on SQLite: on a pool of threads (the default), then on
  // fiber workers (ServerTuning::fiber_threads = cores: the handler does not block).
  if (part("library")) {
    progress("receiver, non-transactional");
    Served<http::Server> ours(tuning, [&](http::Server& s) {
      mount(s, "/webhooks", receiver, [](const Event&) { return Reply{}; });
    });
    load(ours.port, make_requests("warm_", kConnections * 20));
    library = measure(bare.port, ours.port, "lib", true);
    progress("receiver, non-transactional, fiber workers");
    Served<http::Server> fibered(on_fibers, [&](http::Server& s) {
      mount(s, "/webhooks", receiver, [](const Event&) { return Reply{}; });
    });
    load(fibered.port, make_requests("warmf_", kConnections * 20));
    library_fibers = measure(bare.port, fibered.port, "libf", true);
  }

  // The same on PostgreSQL, durable claims (Config::claims automatic), one round.
  const char* pg_url = std::getenv("WEBHOOKS_BENCH_POSTGRES_URL");
  std::string pg_note;
  if (pg_url && *pg_url && part("postgres")) {
    progress("receiver, non-transactional, PostgreSQL");
    try {
      Config pg = config;
      pg.store = pg_url;
      pg.consumer = "bench-" + std::to_string(::getpid()) + "-" +
                    std::to_string(system_clock().now_ms());  // new keys in a reused database
      Receiver pg_receiver(pg);
      pg_note = pg_receiver.durable_claims() ? "durable claims" : "in-process claims";
      Served<http::Server> ours(tuning, [&](http::Server& s) {
        mount(s, "/webhooks", pg_receiver, [](const Event&) { return Reply{}; });
      });
      load(ours.port, make_requests("warm_", kConnections * 20));
      const auto requests = make_requests("pg_", kConnections * kPerConnection);
      on_pg.bare.push_back(load(bare.port, requests));
      on_pg.fresh.push_back(load(ours.port, requests));
      on_pg.dup.push_back(load(ours.port, requests));
    } catch (const std::exception& e) {
      pg_note = std::string("failed: ") + e.what();
    }
  }

  if (!loop.fresh.empty()) {
    std::printf("\n  webhooks::http::Server, the same route answering 200 at once\n");
    report("webhooks::http::Server, same route", loop, false);
    report("the same on fiber workers", loop_fibers, false);
  }
  std::printf(
      "\n  merchant-receiver, a process (transactional: effect row + calls row + dedup record in "
      "one grouped commit); %s\n",
      merchant_note.c_str());
  if (!merchant.fresh.empty()) {
    report("merchant-receiver", merchant, true);
    long events = kConnections * 20;  // warm-up, then each round's keys (sent new or, past the
                                      // budget, first in the duplicates phase)
    for (int r = 0; r < kRounds; ++r) {
      events += std::max(merchant.fresh[r].done, merchant.dup[r].done);
    }
    std::printf(
        "    durable: %lld effect rows, %lld dedup records for the %ld events sent (warm-up "
        "included), %ld answers not 200\n",
        static_cast<long long>(count_rows(merchant_db, "merchant_effects")),
        static_cast<long long>(count_rows(merchant_db, "idempotency_records")), events,
        bench::median_load(merchant.fresh).failed + bench::median_load(merchant.dup).failed);
  }
  std::printf(
      "\n  library, non-transactional (Receiver + mount, the handler returns 200), SQLite, %s\n",
      claim_mode.c_str());
  if (!library.fresh.empty()) {
    std::printf("  on a pool of %zu threads (ServerTuning's default):\n", tuning.threads);
    report("receiver (" + claim_mode + ")", library, true);
    std::printf("  on fiber workers (ServerTuning::fiber_threads = %zu, the cores):\n",
                on_fibers.fiber_threads);
    report("receiver, fiber workers", library_fibers, true);
  }
  if (pg_url && *pg_url && part("postgres")) {
    std::printf(
        "\n  the same on PostgreSQL (fsync, synchronous_commit=on), %s; one round, for "
        "information\n",
        pg_note.c_str());
    if (!on_pg.fresh.empty()) report("receiver on PostgreSQL (" + pg_note + ")", on_pg, false);
  } else {
    std::printf(
        "\n  PostgreSQL: not measured (WEBHOOKS_BENCH_POSTGRES_URL unset; make bench sets it)\n");
  }
  std::printf("\n");

  if (!part("in-process")) {
    std::filesystem::remove_all(dir);
    return 0;
  }
  in_process(receiver, "in-process claims,");
  config.claims = Config::Claims::durable;
  config.store = dir + "/dedup-durable.db";
  Receiver durable(config);
  in_process(durable, "durable claims,   ");
  std::filesystem::remove_all(dir);
  return 0;
}
