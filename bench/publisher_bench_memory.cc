// bench_publisher's phases 4 and 5 (publisher_bench.h): the resident memory of the real
// webhooks-publisherd process, polling a database of pending tasks, then ingesting and delivering.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "publisher_bench.h"
#include "webhooks/db.h"

namespace publisher_bench {

// --- phase 4: the daemon's memory ---
std::string daemon_path() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto path = self.parent_path().parent_path() / "webhooks-publisherd";  // bin/bench/..
  return std::filesystem::exists(path) ? path.string() : std::string();
}

struct Memory {
  long rss_kb = 0, hwm_kb = 0;  // max VmRSS sampled, VmHWM at the end
  double cpu_percent = 0;       // CPU the daemon used while polling
  bool ok = false;
};

long status_kb(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field));
  }
  return 0;
}

double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string f;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::atol(f.c_str());
    if (i == 15) stime = std::atol(f.c_str());
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The daemon forked with `args` and the environment `envp`, its stdout on a pipe and its stderr on
// /dev/null, once it has written its first line: listening (and its port) when that line is
// `listening on HOST:PORT`. Stopped with SIGTERM (and waited for) at the end.
struct ForkedDaemon {
  ForkedDaemon(const std::string& daemon, const std::vector<std::string>& args, char** envp) {
    int out[2];
    if (pipe(out) != 0) return;
    std::vector<char*> argv{const_cast<char*>(daemon.c_str())};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    pid = fork();
    if (pid == 0) {
      dup2(out[1], STDOUT_FILENO);
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, STDERR_FILENO);
      close(out[0]);
      close(out[1]);
      execve(daemon.c_str(), argv.data(), envp);
      _exit(127);
    }
    close(out[1]);
    out_ = out[0];
    std::string line;
    char c;
    while (read(out_, &c, 1) == 1 && c != '\n') line += c;
    listening = line.rfind("listening on ", 0) == 0;
    if (listening) port = std::atoi(line.c_str() + line.rfind(':') + 1);
  }
  ForkedDaemon(const ForkedDaemon&) = delete;
  ForkedDaemon& operator=(const ForkedDaemon&) = delete;
  ~ForkedDaemon() {
    if (out_ < 0) return;
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    close(out_);
  }

  pid_t pid = -1;
  bool listening = false;
  int port = 0;

 private:
  int out_ = -1;
};

// Starts the daemon on `db`, waits for its `listening on` line, samples its memory for `watch`
// while it polls, then stops it with SIGTERM.
Memory daemon_memory(const std::string& daemon, const std::string& db, milliseconds watch) {
  const ForkedDaemon forked(
      daemon,
      {"--db", db, "--listen", "127.0.0.1:0", "--admin-token", kToken, "--log-level", "warn"},
      environ);
  const pid_t pid = forked.pid;
  Memory m;
  if (forked.listening) {
    const double cpu0 = cpu_seconds(pid);
    const auto t0 = Steady::now();
    while (Steady::now() - t0 < watch) {
      m.rss_kb = std::max(m.rss_kb, status_kb(pid, "VmRSS:"));
      std::this_thread::sleep_for(milliseconds(50));
    }
    m.hwm_kb = status_kb(pid, "VmHWM:");
    m.cpu_percent = 100 * (cpu_seconds(pid) - cpu0) / (since_ms(t0, Steady::now()) / 1000);
    m.ok = m.rss_kb > 0;
  }
  return m;
}

// A database holding `count` events with one pending task each, due now, for an endpoint that is
// disabled (so the daemon polls but claims nothing). Bulk SQL in transactions of 100,000 rows, then
// the endpoint is disabled as an operator would (which parks the tasks in one transaction).
double fill_pending(const std::string& path, int count) {
  const auto t0 = Steady::now();
  publisher::Publisher pub(bench_options(path));  // creates and migrates the database
  db::Database& db = pub.database();
  const UnixMillis now = system_clock().now_ms();
  Store& store = pub.store();
  publisher::Endpoint e;
  e.id = "ep_memory";
  e.merchant_id = "m_memory";
  e.url = "http://127.0.0.1:9/hook";
  e.created_at = e.updated_at = now;
  e.secrets.push_back({Secret::generate().to_string(), now, std::nullopt});
  store.create_endpoint(e);
  constexpr int kChunk = 100'000;
  for (int from = 0; from < count; from += kChunk) {
    const std::int64_t to = std::min(count, from + kChunk);
    db.transact([&](db::Transaction& tx) {
      tx.exec(
          "WITH RECURSIVE n(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $2) "
          "INSERT INTO publisher_events (event_id, merchant_id, event_type, payload, created_at) "
          "SELECT printf('0190e1c2-7a3b-7c00-8000-%012d', i), 'm_memory', 'order.captured', "
          "'{\"order_id\":\"ord_' || i || '\",\"amount\":1000,\"currency\":\"EUR\"}', $3 FROM n",
          {std::int64_t{from}, to, std::int64_t{now}});
      tx.exec(
          "WITH RECURSIVE n(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $2) "
          "INSERT INTO publisher_tasks (event_id, endpoint_id, state, attempts, next_attempt_at, "
          "next_trigger, age_from, created_at, updated_at) "
          "SELECT printf('0190e1c2-7a3b-7c00-8000-%012d', i), 'ep_memory', 'pending', 0, $3, "
          "'scheduled', $3, $3, $3 FROM n",
          {std::int64_t{from}, to, std::int64_t{now}});
    });
  }
  store.set_enabled(e.id, false, "benchmark: tasks stay pending", now);
  return since_ms(t0, Steady::now()) / 1000;
}

// --- phase 5: the daemon's memory with ingest and delivery running together ---
// Rounds and requests per round; `bench_publisher --memory-under-load [ROUNDS PER_ROUND]` sets
// them for a longer run.
int load_rounds = 8;
int per_round = 10'000;

struct UnderLoad {
  std::vector<double> rss_mb;  // VmRSS before the load, then after each round
  double per_second = 0;       // ingest requests answered per second, all rounds
  long sent = 0, failed = 0;
  bool ok = false;
};

// Runs the daemon on a fresh database with MALLOC_ARENA_MAX=`arena_env` in its environment (none
// when empty: the daemon's own cap applies), an endpoint on `hook`, and load_rounds rounds of
// per_round ingest requests from kConnections connections while it delivers them; samples VmRSS
// before and after each round.
UnderLoad memory_under_load(const std::string& daemon, const std::string& db,
                            const std::string& hook, const std::string& arena_env,
                            const std::string& label) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "MALLOC_ARENA_MAX=", 17) != 0) env_text.emplace_back(*e);
  }
  if (!arena_env.empty()) env_text.push_back("MALLOC_ARENA_MAX=" + arena_env);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  const ForkedDaemon forked(daemon,
                            {"--db", db, "--listen", "127.0.0.1:0", "--admin-token", kToken,
                             "--allow-private-networks", "--log-level", "warn"},
                            envp.data());
  const pid_t pid = forked.pid;
  UnderLoad u;
  if (forked.listening) {
    const int port = forked.port;
    httplib::Client admin("127.0.0.1", port);
    const auto created = admin.Post(
        "/v1/endpoints", {{"Authorization", std::string("Bearer ") + kToken}},
        nlohmann::json{{"merchant_id", kMerchant}, {"url", hook}}.dump(), "application/json");
    if (created && created->status == 201) {
      u.rss_mb.push_back(status_kb(pid, "VmRSS:") / 1024.0);
      double busy_ms = 0;
      for (int r = 0; r < load_rounds; ++r) {
        const Load load = bench::http_load(
            port, ingest_requests(label + "-" + std::to_string(r) + "-", per_round), kConnections,
            kPhaseBudget, 202);
        u.sent += load.done;
        u.failed += load.failed;
        busy_ms += load.done / load.per_second * 1000;
        u.rss_mb.push_back(status_kb(pid, "VmRSS:") / 1024.0);
      }
      u.per_second = static_cast<double>(u.sent) / (busy_ms / 1000);
      u.ok = u.failed == 0;
    }
  }
  return u;
}

void print_under_load(const char* name, const UnderLoad& u, long delivered) {
  std::printf("  %-46s VmRSS MB:", name);
  for (const double mb : u.rss_mb) std::printf(" %5.1f", mb);
  std::printf("  (%.0f req/s, %ld sent, %ld failed, %ld delivered)\n", u.per_second, u.sent,
              u.failed, delivered);
}

void run_memory_under_load(const std::string& dir, Hook& endpoint) {
  std::printf(
      "\n5. memory under load: webhooks-publisherd ingesting (%d connections) and delivering at "
      "once; VmRSS before, then after each of %d rounds of %d requests\n",
      kConnections, load_rounds, per_round);
  progress("memory under load");
  const std::string daemon = daemon_path();
  if (daemon.empty()) {
    std::printf("  skipped: build/bin/webhooks-publisherd not found (build the daemon)\n");
    return;
  }
  const std::string hook = "http://127.0.0.1:" + std::to_string(endpoint.port) + "/hook";
  // glibc's default cap: 8 arenas per core.
  const std::string glibc_default =
      std::to_string(8 * std::max(1u, std::thread::hardware_concurrency()));
  // Each run: its label, MALLOC_ARENA_MAX for the daemon ("" = the daemon's own cap). 64 is
  // glibc's default on an 8-core machine.
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"glibc default here, MALLOC_ARENA_MAX=" + glibc_default, glibc_default},
      {"glibc default on 8 cores, MALLOC_ARENA_MAX=64", "64"},
      {"M_ARENA_MAX=2 (the daemons' default)", ""}};
  std::vector<std::pair<UnderLoad, long>> results;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const long before = endpoint.received.load();
    const UnderLoad u = memory_under_load(daemon, dir + "/load-" + std::to_string(i) + ".db", hook,
                                          runs[i].second, "run" + std::to_string(i));
    results.emplace_back(u, endpoint.received.load() - before);
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    print_under_load(runs[i].first.c_str(), results[i].first, results[i].second);
  }
}

// 4. The daemon's memory on an empty database and on one with kPendingTasks parked tasks.
void run_memory(const std::string& dir) {
  std::printf(
      "\n4. memory: webhooks-publisherd polling with %d pending tasks (endpoint disabled)\n",
      kPendingTasks);
  progress("memory");
  const std::string daemon = daemon_path();
  if (daemon.empty()) {
    std::printf("  skipped: build/bin/webhooks-publisherd not found (build the daemon)\n");
    return;
  }
  const std::string empty_db = dir + "/empty.db";
  { const publisher::Publisher made(bench_options(empty_db)); }  // creates and migrates it
  const Memory idle = daemon_memory(daemon, empty_db, milliseconds(2000));
  const std::string full_db = dir + "/pending.db";
  const double fill_s = fill_pending(full_db, kPendingTasks);
  const Memory full = daemon_memory(daemon, full_db, milliseconds(3000));
  std::printf("  %-44s VmRSS %6.1f MB  VmHWM %6.1f MB  CPU %5.1f %%\n",
              "daemon on an empty database (baseline)", idle.rss_kb / 1024.0, idle.hwm_kb / 1024.0,
              idle.cpu_percent);
  std::printf(
      "  %-44s VmRSS %6.1f MB  VmHWM %6.1f MB  CPU %5.1f %%  (filled in %.1f s, "
      "file %.0f MB)\n",
      "daemon with 1,000,000 pending tasks", full.rss_kb / 1024.0, full.hwm_kb / 1024.0,
      full.cpu_percent, fill_s, static_cast<double>(std::filesystem::file_size(full_db)) / 1e6);
  std::printf("  target: < 100 MB resident  -> %s\n",
              full.ok && full.hwm_kb < 100 * 1024 ? "met" : "MISSED");
}

}  // namespace publisher_bench
