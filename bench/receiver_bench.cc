// The receiver over HTTP on loopback (64 keep-alive connections, every request a new signed
// event, then the same requests again as duplicates) beside a bare cpp-httplib server with the same
// pool and keep-alive settings answering 200 to the same requests, in the same run: each server
// line is kRounds rounds of (bare server, then that server), medians, and the median of the
// rounds' ratios, so this shared machine's load hits both alike. Issue 13's targets are printed
// met/MISSED for
//   - the real build/bin/merchant-receiver process (transactional mode: its
//     merchant_events row, the effect, commits with the dedup record, grouped), measured from
//     outside, on a SQLite file in a temporary directory, its JSON log lines (stderr) going to a
//     file;
//   - the library's non-transactional path (Receiver + mount on webhooks::http::Server) on SQLite,
//     labelled with the claim mode Config::claims resolves to (in-process: this process holds the
//     file alone);
// and, for information, the same on PostgreSQL with durable claims when
// WEBHOOKS_BENCH_POSTGRES_URL is set (scripts/bench starts a durable server), and
// Receiver::handle in process. SQLite synchronous=NORMAL (db::Options' default) throughout.
// Progress on stderr ("[receiver_bench] <phase>"), so a profiler can wait for a phase.
#include "receiver_bench.h"

#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "bench_util.h"
#include "webhooks/clock.h"
#include "webhooks/launcher/child_process.h"
#include "webhooks/log.h"

namespace {

using namespace receiver_bench;

// What the HTTP parts measured, and the notes their lines carry.
struct Results {
  Rounds loop, loop_fibers, merchant, library, library_fibers, on_pg;
  std::string merchant_note, pg_note;
};

void print_setup(const ServerTuning& tuning, const Config& config) {
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
}

// The same route on webhooks::http::Server (event loop + workers), body limit included.
void measure_loop(int bare_port, const ServerTuning& tuning, const http::ServerTuning& on_fibers,
                  Results& out) {
  progress("http::Server");
  const auto same_route = [](http::Server& s) {
    http::limit_request_bodies(s, http::kDefaultBodyLimit);
    s.Post("/webhooks", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"received\":true}", "application/json");
    });
  };
  Served<http::Server> same(tuning, same_route);
  load(same.port, make_requests("warm_", kConnections * 20));
  out.loop = measure(bare_port, same.port, "loop", false);
  Served<http::Server> same_on_fibers(on_fibers, same_route);
  load(same_on_fibers.port, make_requests("warm_", kConnections * 20));
  out.loop_fibers = measure(bare_port, same_on_fibers.port, "loopf", false);
}

// merchant-receiver, the real process, measured from outside.
void measure_merchant(int bare_port, const std::string& dir, const std::string& merchant_db,
                      Results& out) {
  const std::filesystem::path merchant_bin = webhooks::launcher::bin_dir() / "merchant-receiver";
  if (!std::filesystem::exists(merchant_bin)) {
    out.merchant_note = "skipped: build/bin/merchant-receiver not found (build the examples)";
    return;
  }
  progress("merchant-receiver");
  webhooks::launcher::Options options;
  options.label = "merchant-receiver";
  webhooks::launcher::ChildProcess child(
      merchant_bin, {"--listen", "127.0.0.1:0", "--db", merchant_db, "--secret", kSecretText}, dir,
      options);
  try {
    child.wait_listening();
  } catch (const webhooks::launcher::Error& e) {
    out.merchant_note = std::string("skipped: ") + e.what();
  }
  if (child.port() != 0) {
    load(child.port(), make_requests("warm_", kConnections * 20));
    out.merchant = measure(bare_port, child.port(), "mr", true);
    out.merchant_note = "its JSON log to a file, " +
                        std::to_string(std::filesystem::file_size(child.err_path()) / 1000) + " kB";
  }
}

// The library's non-transactional path on SQLite: on a pool of threads (the default), then on
// fiber workers (ServerTuning::fiber_threads = cores: the handler does not block).
void measure_library(int bare_port, const ServerTuning& tuning, const http::ServerTuning& on_fibers,
                     Receiver& receiver, Results& out) {
  progress("receiver, non-transactional");
  Served<http::Server> ours(tuning, [&](http::Server& s) {
    mount(s, "/webhooks", receiver, [](const Event&) { return Reply{}; });
  });
  load(ours.port, make_requests("warm_", kConnections * 20));
  out.library = measure(bare_port, ours.port, "lib", true);
  progress("receiver, non-transactional, fiber workers");
  Served<http::Server> fibered(on_fibers, [&](http::Server& s) {
    mount(s, "/webhooks", receiver, [](const Event&) { return Reply{}; });
  });
  load(fibered.port, make_requests("warmf_", kConnections * 20));
  out.library_fibers = measure(bare_port, fibered.port, "libf", true);
}

// The same on PostgreSQL, durable claims (Config::claims automatic), one round.
void measure_postgres(int bare_port, const ServerTuning& tuning, const Config& config,
                      const char* pg_url, Results& out) {
  progress("receiver, non-transactional, PostgreSQL");
  try {
    Config pg = config;
    pg.store = pg_url;
    pg.consumer = "bench-" + std::to_string(::getpid()) + "-" +
                  std::to_string(system_clock().now_ms());  // new keys in a reused database
    Receiver pg_receiver(pg);
    out.pg_note = pg_receiver.durable_claims() ? "durable claims" : "in-process claims";
    Served<http::Server> ours(tuning, [&](http::Server& s) {
      mount(s, "/webhooks", pg_receiver, [](const Event&) { return Reply{}; });
    });
    load(ours.port, make_requests("warm_", kConnections * 20));
    const auto requests = make_requests("pg_", kConnections * kPerConnection);
    out.on_pg.bare.push_back(load(bare_port, requests));
    out.on_pg.fresh.push_back(load(ours.port, requests));
    out.on_pg.dup.push_back(load(ours.port, requests));
  } catch (const std::exception& e) {
    out.pg_note = std::string("failed: ") + e.what();
  }
}

// The receiver's configuration: SQLite in `dir`, no maintenance.
Config bench_config(const std::string& dir) {
  Config config;
  config.secrets = {kSecretText};
  config.consumer = "bench";
  config.store = dir + "/dedup.db";  // SQLite, synchronous=NORMAL (db::Options' default)
  config.maintenance_interval = std::chrono::milliseconds(0);
  return config;
}

void print_loop(const Results& res) {
  if (res.loop.fresh.empty()) return;
  std::printf("\n  webhooks::http::Server, the same route answering 200 at once\n");
  report("webhooks::http::Server, same route", res.loop, false);
  report("the same on fiber workers", res.loop_fibers, false);
}

void print_merchant(const Results& res, const std::string& merchant_db) {
  std::printf(
      "\n  merchant-receiver, a process (transactional: effect row + calls row + dedup record in "
      "one grouped commit); %s\n",
      res.merchant_note.c_str());
  if (res.merchant.fresh.empty()) return;
  const Rounds& merchant = res.merchant;
  report("merchant-receiver", merchant, true);
  long events = kConnections * 20;  // warm-up, then each round's keys (sent new or, past the
                                    // budget, first in the duplicates phase)
  for (int r = 0; r < kRounds; ++r) {
    events += std::max(merchant.fresh[r].done, merchant.dup[r].done);
  }
  std::printf(
      "    durable: %lld effect rows, %lld dedup records for the %ld events sent (warm-up "
      "included), %ld answers not 200\n",
      static_cast<long long>(count_rows(merchant_db, "merchant_events WHERE effect IS NOT NULL")),
      static_cast<long long>(count_rows(merchant_db, "idempotency_records")), events,
      bench::median_load(merchant.fresh).failed + bench::median_load(merchant.dup).failed);
}

void print_library(const Results& res, const std::string& claim_mode, const ServerTuning& tuning,
                   const http::ServerTuning& on_fibers) {
  std::printf(
      "\n  library, non-transactional (Receiver + mount, the handler returns 200), SQLite, %s\n",
      claim_mode.c_str());
  if (res.library.fresh.empty()) return;
  std::printf("  on a pool of %zu threads (ServerTuning's default):\n", tuning.threads);
  report("receiver (" + claim_mode + ")", res.library, true);
  std::printf("  on fiber workers (ServerTuning::fiber_threads = %zu, the cores):\n",
              on_fibers.fiber_threads);
  report("receiver, fiber workers", res.library_fibers, true);
}

void print_postgres(const Results& res, bool measured) {
  if (measured) {
    std::printf(
        "\n  the same on PostgreSQL (fsync, synchronous_commit=on), %s; one round, for "
        "information\n",
        res.pg_note.c_str());
    if (!res.on_pg.fresh.empty()) {
      report("receiver on PostgreSQL (" + res.pg_note + ")", res.on_pg, false);
    }
  } else {
    std::printf(
        "\n  PostgreSQL: not measured (WEBHOOKS_BENCH_POSTGRES_URL unset; make bench sets it)\n");
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
  Config config = bench_config(dir);
  Receiver receiver(config);
  const std::string claim_mode = receiver.durable_claims() ? "durable claims" : "in-process claims";

  const ServerTuning tuning;  // the same for every server in this process
  print_setup(tuning, config);
  // The bare server runs throughout; every line below alternates with it.
  Served<httplib::Server> bare(tuning, [](httplib::Server& s) {
    s.Post("/webhooks", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"received\":true}", "application/json");
    });
  });
  load(bare.port, make_requests("warm_", kConnections * 20));  // warm-up
  Results res;
  http::ServerTuning on_fibers = tuning;  // fiber workers, one thread per core
  on_fibers.fiber_threads = std::max(1u, std::thread::hardware_concurrency());
  if (part("loop")) measure_loop(bare.port, tuning, on_fibers, res);
  const std::string merchant_db = dir + "/merchant.db";
  if (part("merchant")) {
    measure_merchant(bare.port, dir, merchant_db, res);
  } else {
    res.merchant_note = "not measured (not asked for)";
  }
  if (part("library")) measure_library(bare.port, tuning, on_fibers, receiver, res);
  const char* pg_url = std::getenv("WEBHOOKS_BENCH_POSTGRES_URL");
  const bool on_postgres = pg_url && *pg_url && part("postgres");
  if (on_postgres) measure_postgres(bare.port, tuning, config, pg_url, res);

  print_loop(res);
  print_merchant(res, merchant_db);
  print_library(res, claim_mode, tuning, on_fibers);
  print_postgres(res, on_postgres);
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
