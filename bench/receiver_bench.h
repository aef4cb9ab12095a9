// Shared parts of bench_receiver (receiver_bench.cc): the constants of its phases, the signed
// requests, the load loop, the rounds beside the bare server and their lines, a server on its
// own thread; Receiver::handle in process is in receiver_bench_in_process.cc.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "http_load.h"
#include "webhooks/receiver/http_server.h"
#include "webhooks/secret.h"

namespace receiver_bench {

using namespace webhooks;
using namespace webhooks::receiver;
using Clock = std::chrono::steady_clock;

constexpr int kConnections = 64;
constexpr int kPerConnection = 300;                     // requests per connection per phase
constexpr auto kPhaseBudget = std::chrono::seconds(8);  // and at most this long per phase
// Rounds per server line: the bare server, then the server measured, alternately, so the load of
// this shared machine hits both alike; medians of the rounds, ratio = median of the rounds' ratios.
constexpr int kRounds = 3;
inline const std::string kSecretText = Secret::generate().to_string();

using Request = bench::HttpRequest;
using Figures = bench::HttpLoad;

// `count` new events signed with kSecretText, webhook-ids `prefix`<i>.
std::vector<Request> make_requests(const std::string& prefix, int count);
// kConnections keep-alive clients, each sending its slice of `requests` (bench/http_load.h).
Figures load(int port, const std::vector<Request>& requests);

// One server measured in kRounds rounds, each right after the bare server on the same requests.
struct Rounds {
  std::vector<Figures> bare, fresh, dup;
};

// kRounds rounds on fresh keys `prefix`<round>_<i>: the bare server, then `port` (new events),
// then `port` again with the same requests (duplicates) when `duplicates`.
Rounds measure(int bare_port, int port, const std::string& prefix, bool duplicates);
// A server's lines: its bare rounds, new events and duplicates with their ratios to the bare
// server; with `targets`, issue 13's: new events >= 0.6x bare with p99 < 10 ms, duplicates >=
// 0.7x bare, every answer 200.
void report(const std::string& name, const Rounds& m, bool targets);
// Progress on stderr: "[receiver_bench] <phase>".
void progress(const char* phase);

// A server on its own thread, bound to 127.0.0.1 on a free port.
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

// Receiver::handle in process on 1 and 4 threads: new events, then duplicates; one line each.
void in_process(Receiver& receiver, const char* label);
// Counts of one SQLite file's table, or -1 when it cannot be read.
std::int64_t count_rows(const std::string& path, const std::string& table);

}  // namespace receiver_bench
