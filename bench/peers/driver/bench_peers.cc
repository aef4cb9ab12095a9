// bench_peers: ours beside the programs a user would pick instead (bench/peers/README.md), with one
// load generator for both (bench/http_load.h: 64 keep-alive connections posting precomputed
// requests, bounded in count and time), rounds alternated (ours, peer, ours, peer, ...), medians.
// Every server is a real process on 127.0.0.1, on a fresh SQLite file (or a fresh Redis) per round.
//
//   bench_peers --bin build/bin --peers build/peers --node bench/peers/node-publisher --work DIR
//               [--rounds 3] [--only receiver|publisher|probe-ingest|probe-receiver]
//               [--node-processes 1]
//
// Built standalone by scripts/bench-peers (cpp-httplib, nlohmann-json, OpenSSL, SQLite): it links
// nothing of ours, so it measures ours and the peers from outside alike.
#include <fcntl.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "http_load.h"
#include "order_created.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using bench::HttpLoad;
using bench::HttpRequest;
using nlohmann::json;

namespace {

constexpr int kConnections = 64;
constexpr auto kBudget = std::chrono::seconds(10);     // each timed load
constexpr int kReceiverRequests = kConnections * 500;  // about 3 s at 10,000/s
constexpr int kIngestRequests = kConnections * 300;    // about 5 s at 4,000/s
constexpr int kQueued = 50000;
constexpr const char* kToken = "bench-peers-admin-token";
constexpr const char* kMerchant = "m_bench";

struct Config {
  fs::path bin = "build/bin", peers = "build/peers", node = "bench/peers/node-publisher",
           work = "/tmp/bench-peers";
  int rounds = 3;
  // Node API processes (node:cluster) and BullMQ worker processes: one per core by default, as
  // ours uses every core (its HTTP fiber threads, its delivery workers).
  int node_processes = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string only;
};
Config cfg;

void progress(const std::string& what) {
  std::fprintf(stderr, "[bench_peers] %s\n", what.c_str());
  std::fflush(stderr);
}

// --- signing: Standard Webhooks v1 ---
std::string base64(const unsigned char* data, std::size_t n) {
  std::string out(4 * ((n + 2) / 3), '\0');
  const int len =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  out.resize(static_cast<std::size_t>(len));
  return out;
}
std::string unbase64(const std::string& text) {
  std::string out(3 * text.size() / 4 + 3, '\0');
  const int len = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(text.data()),
                                  static_cast<int>(text.size()));
  if (len < 0) throw std::runtime_error("bad base64");
  std::size_t pad = 0;
  for (auto it = text.rbegin(); it != text.rend() && *it == '='; ++it) ++pad;
  out.resize(static_cast<std::size_t>(len) - pad);
  return out;
}
std::string new_secret() {
  unsigned char key[24];
  RAND_bytes(key, sizeof key);
  return "whsec_" + base64(key, sizeof key);
}
std::string sign(const std::string& secret, const std::string& id, long ts,
                 const std::string& body) {
  const std::string key = unbase64(secret.substr(6));
  const std::string content = id + "." + std::to_string(ts) + "." + body;
  unsigned char mac[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(content.data()), content.size(), mac, &len);
  return "v1," + base64(mac, len);
}

// Signed deliveries of new events, as bench/receiver_bench_util.cc makes them: webhook-ids
// `prefix`<i>, bodies {"id","type","timestamp","data": order_created(i)} (about 1 KiB).
std::vector<HttpRequest> receiver_requests(const std::string& secret, const std::string& prefix,
                                           int n) {
  const long ts = static_cast<long>(std::time(nullptr));
  std::vector<HttpRequest> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const std::string id = prefix + std::to_string(i);
    HttpRequest r;
    r.path = "/webhooks";
    r.body = json{{"id", id},
                  {"type", "order.created"},
                  {"timestamp", "2026-11-30T21:00:00Z"},
                  {"data", bench::order_created(i)}}
                 .dump();
    r.headers = {{"webhook-id", id},
                 {"webhook-timestamp", std::to_string(ts)},
                 {"webhook-signature", sign(secret, id, ts, r.body)},
                 {"webhook-delivery-id", "dlv_" + std::to_string(i)}};
    out.push_back(std::move(r));
  }
  return out;
}

// POST /v1/events with fresh Idempotency-Keys, as bench/publisher_bench_util.cc makes them.
std::vector<HttpRequest> ingest_requests(const std::string& prefix, int n) {
  std::vector<HttpRequest> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    out.push_back({"/v1/events",
                   json{{"merchant_id", kMerchant},
                        {"type", "order.created"},
                        {"data", bench::order_created(i)}}
                       .dump(),
                   {{"Authorization", std::string("Bearer ") + kToken},
                    {"Idempotency-Key", prefix + std::to_string(i)}}});
  }
  return out;
}

HttpLoad load(int port, const std::vector<HttpRequest>& r, int status,
              std::chrono::milliseconds budget = kBudget) {
  return bench::http_load(port, r, kConnections, budget, status);
}

// --- child processes: stdout/stderr to files, the first stdout line awaited ---
struct Child {
  pid_t pid = -1;
  fs::path out;
  std::string name;
  Child(const std::string& label, const std::vector<std::string>& argv, const fs::path& dir)
      : name(label) {
    out = dir / (label + ".out");
    const fs::path err = dir / (label + ".err");
    pid = fork();
    if (pid < 0) throw std::runtime_error("fork");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      setpgid(0, 0);
      const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int n = open("/dev/null", O_RDONLY);
      dup2(n, 0), dup2(o, 1), dup2(e, 2);
      std::vector<char*> a;
      for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
      a.push_back(nullptr);
      execvp(a[0], a.data());
      _exit(127);
    }
  }
  // The first stdout line (waits up to 20 s).
  std::string first_line() {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline) {
      std::ifstream in(out);
      std::string line;
      if (std::getline(in, line) && !in.eof()) return line;
      if (waitpid(pid, nullptr, WNOHANG) == pid) {
        pid = -1;
        throw std::runtime_error(name + " exited before its first line; see " + out.string());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw std::runtime_error(name + " printed no line in 20 s");
  }
  int port() {
    const std::string line = first_line();
    const auto colon = line.rfind(':');
    if (line.rfind("listening on ", 0) != 0 || colon == std::string::npos) {
      throw std::runtime_error(name + " printed \"" + line + "\"");
    }
    return std::stoi(line.substr(colon + 1));
  }
  void signal(int s) {
    if (pid > 0) kill(pid, s);
  }
  ~Child() {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 500; ++i) {
      if (waitpid(pid, nullptr, WNOHANG) == pid) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

fs::path fresh_dir(const std::string& name) {
  const fs::path d = cfg.work / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

long long sqlite_count(const fs::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  long long n = -1;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

std::string run(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  return out;
}

// --- the endpoint deliveries go to: answers 200 at once, counts (bench/publisher_bench.h's Hook)
// ---
struct Hook {
  httplib::Server server;
  int port = 0;
  std::thread thread;
  std::atomic<long> received{0};
  Hook() {
    server.new_task_queue = [] { return new httplib::ThreadPool(160); };
    server.set_tcp_nodelay(true);
    server.set_keep_alive_max_count(1000000);
    server.Post("/hook", [this](const httplib::Request&, httplib::Response& res) {
      received.fetch_add(1, std::memory_order_relaxed);
      res.set_content("", "text/plain");
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~Hook() {
    server.stop();
    thread.join();
  }
};

// CPU time (user + system, every thread) the process `pid` has used so far, in microseconds:
// /proc/PID/stat, fields 14 and 15 (clock ticks).
double cpu_us(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);
  }
  return ticks * 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Bytes the process `pid` has passed to write(2), pwrite(2) and the like so far (files and pipes,
// not sockets): /proc/PID/io, wchar.
double written_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/io");
  std::string key;
  double value = 0;
  while (in >> key >> value) {
    if (key == "wchar:") return value;
  }
  return 0;
}

// --- the receivers ---
// Ours as every receiver round starts it (the bench adds --db and --secret).
std::vector<std::string> merchant_receiver_argv() {
  return {(cfg.bin / "merchant-receiver").string(), "--listen", "127.0.0.1:0"};
}

struct ReceiverRound {
  HttpLoad fresh, dup;
  // The server's CPU time per answered request of each load, microseconds: what each costs on
  // the shared cores, less noisy than the rate when the machine is busy.
  double fresh_cpu_us = 0, dup_cpu_us = 0;
  double fresh_written = 0;  // bytes written (SQLite's WAL and checkpoints) per new event
};

ReceiverRound receiver_round(const std::string& label, std::vector<std::string> argv,
                             const std::string& secret, const std::vector<HttpRequest>& requests,
                             bool duplicates, int round) {
  const fs::path dir = fresh_dir(label + "-" + std::to_string(round));
  argv.insert(argv.end(), {"--db", (dir / "receiver.db").string(), "--secret", secret});
  Child child(label, argv, dir);
  const int port = child.port();
  load(port, receiver_requests(secret, "warm_", kConnections * 20), 200);
  ReceiverRound r;
  const auto timed = [&](HttpLoad& l, double& per_request, double* written) {
    const double before = cpu_us(child.pid), bytes_before = written_bytes(child.pid);
    l = load(port, requests, 200);
    const auto done = static_cast<double>(std::max(1L, l.done));
    per_request = (cpu_us(child.pid) - before) / done;
    if (written) *written = (written_bytes(child.pid) - bytes_before) / done;
  };
  timed(r.fresh, r.fresh_cpu_us, &r.fresh_written);
  if (duplicates) timed(r.dup, r.dup_cpu_us, nullptr);
  return r;
}

// --- the publishers: ingest timed, then topped up to kQueued, then the drain timed ---
struct PublisherRound {
  HttpLoad ingest;
  double delivered_per_second = 0;
  long long queued = 0, received = 0, recorded = 0;
};

// Ingest into a publisher that is not delivering (after the 1,000 of the warm-up), then top it up
// to kQueued events in all.
HttpLoad fill(int port, const std::string& prefix, int expect) {
  load(port, ingest_requests(prefix + "warm-", 1000), expect);
  HttpLoad timed = load(port, ingest_requests(prefix + "t-", kIngestRequests), expect);
  const int rest = kQueued - 1000 - static_cast<int>(timed.done - timed.failed);
  if (rest > 0) load(port, ingest_requests(prefix + "f-", rest), expect, std::chrono::seconds(40));
  return timed;
}

void wait_for(Hook& hook, long target, Clock::time_point t0, PublisherRound& r, long before) {
  const auto deadline = t0 + std::chrono::seconds(60);
  while (hook.received.load() - before < target && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  r.received = hook.received.load() - before;
  r.delivered_per_second =
      static_cast<double>(r.received) / (std::chrono::duration<double>(Clock::now() - t0).count());
}

PublisherRound ours_publisher(Hook& hook, int round) {
  const fs::path dir = fresh_dir("publisherd-" + std::to_string(round));
  const fs::path db = dir / "publisher.db";
  Child d("webhooks-publisherd",
          {(cfg.bin / "webhooks-publisherd").string(), "--listen", "127.0.0.1:0", "--db",
           db.string(), "--admin-token", kToken, "--allow-private-networks"},
          dir);
  const int port = d.port();
  httplib::Client admin("127.0.0.1", port);
  const httplib::Headers auth{{"Authorization", std::string("Bearer ") + kToken}};
  // rate_limit 1 while the queue fills, so that (as in bench_publisher, whose workers start after
  // ingest) the ingest is measured alone and the deliveries are queued; lifted for the drain.
  auto created = admin.Post("/v1/endpoints", auth,
                            json{{"merchant_id", kMerchant},
                                 {"url", "http://127.0.0.1:" + std::to_string(hook.port) + "/hook"},
                                 {"rate_limit", 1}}
                                .dump(),
                            "application/json");
  if (!created || created->status != 201) throw std::runtime_error("endpoint create failed");
  const std::string id = json::parse(created->body)["id"];
  PublisherRound r;
  r.ingest = fill(port, "r" + std::to_string(round), 202);
  r.queued = sqlite_count(db, "SELECT COUNT(*) FROM publisher_tasks WHERE state = 'pending'");
  const long before = hook.received.load();
  const auto t0 = Clock::now();
  auto patched = admin.Patch(("/v1/endpoints/" + id).c_str(), auth, R"({"rate_limit":null})",
                             "application/json");
  if (!patched || patched->status != 200) throw std::runtime_error("endpoint update failed");
  wait_for(hook, r.queued, t0, r, before);
  // Every attempt recorded: the endpoint counts a delivery before its attempt is committed. All
  // of the round's tasks, those delivered at 1/s while the queue filled too.
  const long long tasks = sqlite_count(db, "SELECT COUNT(*) FROM publisher_tasks");
  const auto records_by = Clock::now() + std::chrono::seconds(10);
  do {
    r.recorded = sqlite_count(db, "SELECT COUNT(*) FROM publisher_attempts WHERE status = 200");
  } while (r.recorded < tasks && Clock::now() < records_by &&
           (std::this_thread::sleep_for(std::chrono::milliseconds(20)), true));
  return r;
}

// --only probe-ingest: does keeping the queue with a rate_limit of 1/s cost ours ingest? The
// daemon's ingest alone (kIngestRequests after the warm-up) with the endpoint rate-limited (as in
// the rows), with it live (delivering to the hook meanwhile) and with no endpoint (no tasks).
HttpLoad ours_ingest_probe(Hook& hook, const std::string& mode, int round) {
  const fs::path dir = fresh_dir("probe-" + mode + "-" + std::to_string(round));
  Child d("webhooks-publisherd",
          {(cfg.bin / "webhooks-publisherd").string(), "--listen", "127.0.0.1:0", "--db",
           (dir / "publisher.db").string(), "--admin-token", kToken, "--allow-private-networks"},
          dir);
  const int port = d.port();
  if (mode != "none") {
    httplib::Client admin("127.0.0.1", port);
    json e{{"merchant_id", kMerchant},
           {"url", "http://127.0.0.1:" + std::to_string(hook.port) + "/hook"}};
    if (mode == "rate-limited") e["rate_limit"] = 1;
    auto created = admin.Post("/v1/endpoints", {{"Authorization", std::string("Bearer ") + kToken}},
                              e.dump(), "application/json");
    if (!created || created->status != 201) throw std::runtime_error("endpoint create failed");
  }
  load(port, ingest_requests("warm-", 1000), 202);
  return load(port, ingest_requests("p-", kIngestRequests), 202);
}

PublisherRound node_publisher(Hook& hook, int round) {
  const fs::path dir = fresh_dir("bullmq-" + std::to_string(round));
  const std::string secret = new_secret();
  {
    std::ofstream f(dir / "endpoints.json");
    f << json{{kMerchant,
               json::array({{{"id", "ep_1"},
                             {"url", "http://127.0.0.1:" + std::to_string(hook.port) + "/hook"},
                             {"secret", secret}}})}}
             .dump();
  }
  // Redis with an append-only file synced every second: a crashed Redis process loses nothing, a
  // power loss the last second (SQLite WAL with synchronous=NORMAL: the last commits).
  const int redis_port = 20000 + static_cast<int>(getpid() % 20000);
  Child redis("redis-server",
              {"redis-server", "--port", std::to_string(redis_port), "--bind", "127.0.0.1", "--dir",
               dir.string(), "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
               "--daemonize", "no", "--maxmemory-policy", "noeviction"},
              dir);
  const std::string redis_url = "redis://127.0.0.1:" + std::to_string(redis_port);
  for (int i = 0;
       i < 200 &&
       run("redis-cli -p " + std::to_string(redis_port) + " ping 2>/dev/null").find("PONG") ==
           std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string script = (cfg.node / "publisher.js").string();
  const std::string endpoints = (dir / "endpoints.json").string();
  const std::string processes = std::to_string(cfg.node_processes);
  Child api("node-api",
            {"node", script, "--role", "api", "--listen", "127.0.0.1:0", "--redis", redis_url,
             "--endpoints", endpoints, "--token", kToken, "--processes", processes},
            dir);
  const int port = api.port();
  std::vector<std::unique_ptr<Child>> workers;
  for (int i = 0; i < cfg.node_processes; ++i) {
    workers.push_back(std::make_unique<Child>(
        "node-worker-" + std::to_string(i),
        std::vector<std::string>{"node", script, "--role", "worker", "--redis", redis_url,
                                 "--endpoints", endpoints, "--concurrency", "64", "--paused"},
        dir));
  }
  for (auto& w : workers) {
    if (w->first_line() != "ready") throw std::runtime_error("node worker not ready");
  }
  PublisherRound r;
  r.ingest = fill(port, "r" + std::to_string(round), 202);
  const auto count = [&](const char* cmd) {
    const std::string out = run("redis-cli -p " + std::to_string(redis_port) + " " + cmd);
    return out.empty() ? -1LL : std::atoll(out.c_str());
  };
  r.queued = count("llen bull:deliveries:wait");
  const long before = hook.received.load();
  const auto t0 = Clock::now();
  for (auto& w : workers) w->signal(SIGUSR1);
  wait_for(hook, r.queued, t0, r, before);
  const auto records_by = Clock::now() + std::chrono::seconds(10);
  do {
    r.recorded = count("zcard bull:deliveries:completed");
  } while (r.recorded < r.queued && Clock::now() < records_by &&
           (std::this_thread::sleep_for(std::chrono::milliseconds(20)), true));
  return r;
}

// --- the table ---
struct Row {
  Row(std::string w, std::string p) : what(std::move(w)), peer(std::move(p)) {}
  std::string what, peer;
  std::vector<double> ours_rate, peer_rate, ours_p99, peer_p99;
  // Receiver rows only: the server's CPU per request (microseconds) and bytes written per request.
  std::vector<double> ours_cpu_us, peer_cpu_us, ours_written, peer_written;
  long ours_failed = 0, peer_failed = 0;
};

void add(std::vector<double>& rate, std::vector<double>& p99, long& failed, const HttpLoad& l) {
  rate.push_back(l.per_second);
  p99.push_back(l.p99_ms);
  failed += l.failed;
}

// A receiver row's round: the new events' loads, or with `duplicates` the re-sent ones'.
void add_receiver(Row& row, const ReceiverRound& ours, const ReceiverRound& peer, bool duplicates) {
  add(row.ours_rate, row.ours_p99, row.ours_failed, duplicates ? ours.dup : ours.fresh);
  add(row.peer_rate, row.peer_p99, row.peer_failed, duplicates ? peer.dup : peer.fresh);
  row.ours_cpu_us.push_back(duplicates ? ours.dup_cpu_us : ours.fresh_cpu_us);
  row.peer_cpu_us.push_back(duplicates ? peer.dup_cpu_us : peer.fresh_cpu_us);
  if (!duplicates) {
    row.ours_written.push_back(ours.fresh_written);
    row.peer_written.push_back(peer.fresh_written);
  }
}

std::string rounds_text(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += (s.empty() ? "" : " ") + std::to_string(static_cast<long>(x + 0.5));
  return s;
}

void print_table(const std::vector<Row>& rows) {
  std::printf("\n%-44s %10s %8s  %-26s %10s %8s %7s\n", "ours", "ours/s", "p99 ms", "peer",
              "peer/s", "p99 ms", "ratio");
  for (const Row& r : rows) {
    const double o = bench::median(std::vector<double>(r.ours_rate));
    const double p = bench::median(std::vector<double>(r.peer_rate));
    const auto p99 = [](const std::vector<double>& v) {
      char b[16];
      if (v.empty()) return std::string("-");
      std::snprintf(b, sizeof b, "%.1f", bench::median(std::vector<double>(v)));
      return std::string(b);
    };
    std::printf("%-44s %10.0f %8s  %-26s %10.0f %8s %6.2fx\n", r.what.c_str(), o,
                p99(r.ours_p99).c_str(), r.peer.c_str(), p, p99(r.peer_p99).c_str(),
                p > 0 ? o / p : 0.0);
  }
  std::printf("\nrounds (per second, in order):\n");
  for (const Row& r : rows) {
    std::printf("  %-44s ours: %s; peer: %s", r.what.c_str(), rounds_text(r.ours_rate).c_str(),
                rounds_text(r.peer_rate).c_str());
    if (r.ours_failed + r.peer_failed > 0) {
      std::printf("  (unexpected answers: ours %ld, peer %ld)", r.ours_failed, r.peer_failed);
    }
    std::printf("\n");
  }
  std::printf("\nserver CPU per request (user + system, every thread; microseconds, medians):\n");
  for (const Row& r : rows) {
    if (r.ours_cpu_us.empty()) continue;
    const double o = bench::median(std::vector<double>(r.ours_cpu_us));
    const double p = bench::median(std::vector<double>(r.peer_cpu_us));
    std::printf("  %-44s ours %6.0f  %-26s %6.0f  (ours/peer %.2f)\n", r.what.c_str(), o,
                r.peer.c_str(), p, p > 0 ? o / p : 0.0);
  }
  std::printf("\nbytes the server wrote to files per new event (/proc/PID/io wchar; medians):\n");
  for (const Row& r : rows) {
    if (r.ours_written.empty()) continue;
    std::printf("  %-44s ours %6.0f  %-26s %6.0f\n", r.what.c_str(),
                bench::median(std::vector<double>(r.ours_written)), r.peer.c_str(),
                bench::median(std::vector<double>(r.peer_written)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "bench_peers: ours beside the programs a user would pick instead (bench/peers/README.md); "
      "run by make bench-peers"};
  app.add_option("--bin", cfg.bin, "our binaries (merchant-receiver, webhooks-publisherd)")
      ->capture_default_str();
  app.add_option("--peers", cfg.peers, "the built peers (go-receiver)")->capture_default_str();
  app.add_option("--node", cfg.node, "the Node publisher's folder, with node_modules")
      ->capture_default_str();
  app.add_option("--work", cfg.work, "scratch folder for databases and logs")
      ->capture_default_str();
  app.add_option("--rounds", cfg.rounds, "rounds of each, alternated; medians over them")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--only", cfg.only, "run one part only")
      ->check(CLI::IsMember({"receiver", "publisher", "probe-ingest", "probe-receiver"}));
  app.add_option("--node-processes", cfg.node_processes,
                 "Node API and BullMQ worker processes (default: one per core)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  fs::create_directories(cfg.work);
  double la[3] = {0, 0, 0};
  getloadavg(la, 3);
  std::printf(
      "bench_peers: %u cores, load average %.2f %.2f %.2f; %d rounds alternated, medians; "
      "%d keep-alive connections, <= %lld s per load\n",
      std::thread::hardware_concurrency(), la[0], la[1], la[2], cfg.rounds, kConnections,
      static_cast<long long>(kBudget.count()));
  std::fflush(stdout);
  std::vector<Row> rows;
  try {
    if (cfg.only.empty() || cfg.only == "receiver") {
      Row fresh_g{"merchant-receiver, new events", "Go, group commit"};
      Row fresh_p{"merchant-receiver, new events", "Go, one INSERT a request"};
      Row dup_g{"merchant-receiver, duplicates", "Go, group commit"};
      // The optional Node peer, when its npm packages are installed (scripts/bench-peers).
      const fs::path node_receiver = cfg.node.parent_path() / "node-receiver";
      const bool with_node = fs::exists(node_receiver / "node_modules" / "better-sqlite3");
      Row fresh_n{"merchant-receiver, new events", "Node, one INSERT a request"};
      Row dup_n{"merchant-receiver, duplicates", "Node, one INSERT a request"};
      const std::string go = (cfg.peers / "go-receiver").string();
      for (int round = 0; round < cfg.rounds; ++round) {
        const std::string secret = new_secret();
        const auto requests =
            receiver_requests(secret, "r" + std::to_string(round) + "_", kReceiverRequests);
        progress("receiver round " + std::to_string(round + 1) + ": merchant-receiver");
        const auto ours = receiver_round("merchant-receiver", merchant_receiver_argv(), secret,
                                         requests, true, round);
        progress("receiver round " + std::to_string(round + 1) + ": go-receiver -group");
        const auto group = receiver_round("go-group", {go, "-listen", "127.0.0.1:0", "-group"},
                                          secret, requests, true, round);
        progress("receiver round " + std::to_string(round + 1) + ": go-receiver");
        const auto plain = receiver_round("go-plain", {go, "-listen", "127.0.0.1:0"}, secret,
                                          requests, false, round);
        if (with_node) {
          progress("receiver round " + std::to_string(round + 1) + ": node-receiver");
          const auto node = receiver_round(
              "node-receiver",
              {"node", (node_receiver / "receiver.js").string(), "--listen", "127.0.0.1:0"}, secret,
              requests, true, round);
          add_receiver(fresh_n, ours, node, false);
          add_receiver(dup_n, ours, node, true);
        }
        add_receiver(fresh_g, ours, group, false);
        add_receiver(fresh_p, ours, plain, false);
        add_receiver(dup_g, ours, group, true);
      }
      rows.insert(rows.end(), {fresh_g, fresh_p, dup_g});
      if (with_node) rows.insert(rows.end(), {fresh_n, dup_n});
    }
    if (cfg.only == "probe-receiver") {
      std::vector<double> rate, p99, cpu, written, dup_rate, dup_cpu;
      for (int round = 0; round < cfg.rounds; ++round) {
        const std::string secret = new_secret();
        progress("probe-receiver round " + std::to_string(round + 1));
        const auto ours = receiver_round(
            "merchant-receiver", merchant_receiver_argv(), secret,
            receiver_requests(secret, "r" + std::to_string(round) + "_", kReceiverRequests), true,
            round);
        rate.push_back(ours.fresh.per_second), p99.push_back(ours.fresh.p99_ms);
        cpu.push_back(ours.fresh_cpu_us), written.push_back(ours.fresh_written);
        dup_rate.push_back(ours.dup.per_second), dup_cpu.push_back(ours.dup_cpu_us);
      }
      const auto m = [](std::vector<double> v) { return bench::median(std::move(v)); };
      std::printf(
          "  merchant-receiver (%s), medians: new events %.0f/s p99 %.1f ms, %.0f us CPU and "
          "%.0f bytes written each; duplicates %.0f/s, %.0f us CPU each\n  new events/s by "
          "round: %s\n",
          cfg.bin.c_str(), m(rate), m(p99), m(cpu), m(written), m(dup_rate), m(dup_cpu),
          rounds_text(rate).c_str());
      return 0;
    }
    if (cfg.only == "probe-ingest") {
      Hook hook;
      std::map<std::string, std::vector<HttpLoad>> by;
      for (int round = 0; round < cfg.rounds; ++round) {
        for (const char* mode : {"rate-limited", "live", "none"}) {
          progress(std::string("probe-ingest round ") + std::to_string(round + 1) + ": " + mode);
          by[mode].push_back(ours_ingest_probe(hook, mode, round));
        }
      }
      for (const auto& [mode, loads] : by) {
        const HttpLoad m = bench::median_load(loads);
        std::printf(
            "  webhooks-publisherd ingest, endpoint %-13s %8.0f req/s  p99 %6.1f ms  (%ld "
            "failed)\n",
            mode.c_str(), m.per_second, m.p99_ms, m.failed);
      }
      return 0;
    }
    if (cfg.only.empty() || cfg.only == "publisher") {
      const std::string n = std::to_string(cfg.node_processes);
      Row ingest{"webhooks-publisherd, ingest", "Node + BullMQ (" + n + " proc.)"};
      Row drain{"webhooks-publisherd, 50,000 deliveries", "BullMQ Worker (" + n + " x 64)"};
      Hook hook;
      std::string checks;
      for (int round = 0; round < cfg.rounds; ++round) {
        progress("publisher round " + std::to_string(round + 1) + ": webhooks-publisherd");
        const PublisherRound o = ours_publisher(hook, round);
        progress("publisher round " + std::to_string(round + 1) + ": node + BullMQ");
        const PublisherRound p = node_publisher(hook, round);
        add(ingest.ours_rate, ingest.ours_p99, ingest.ours_failed, o.ingest);
        add(ingest.peer_rate, ingest.peer_p99, ingest.peer_failed, p.ingest);
        drain.ours_rate.push_back(o.delivered_per_second);
        drain.peer_rate.push_back(p.delivered_per_second);
        drain.ours_failed += o.queued - o.received;
        drain.peer_failed += p.queued - p.received;
        checks += "  round " + std::to_string(round + 1) + ": ours queued " +
                  std::to_string(o.queued) + ", received " + std::to_string(o.received) +
                  ", attempts recorded (200) " + std::to_string(o.recorded) + "; BullMQ queued " +
                  std::to_string(p.queued) + ", received " + std::to_string(p.received) +
                  ", jobs completed " + std::to_string(p.recorded) + "\n";
      }
      rows.insert(rows.end(), {ingest, drain});
      std::printf("\ndeliveries:\n%s", checks.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_peers: %s\n", e.what());
    print_table(rows);
    return 1;
  }
  print_table(rows);
  std::printf(
      "\nratio = ours / peer (median rates). p99: median over the rounds of each round's p99.\n");
  return 0;
}
