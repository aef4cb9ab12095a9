// What every server executable of the toolkit does the same way: listen through http::bind_server
// and print `listening on HOST:PORT` (README.md, "Configuration and defaults"), stop cleanly on
// SIGTERM/SIGINT, and answer JSON.
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>
#include <thread>

#include "webhooks/http_server.h"

namespace webhooks::app {

// A `--listen` value: "HOST:PORT" or "[IPv6]:PORT"; port 0 picks a free port.
struct ListenAddress {
  std::string host;
  int port = 0;
};

// Throws webhooks::Error(invalid_argument) when `text` is not HOST:PORT or [IPv6]:PORT with a
// non-empty host and a port in 0..65535; its message quotes `text` and says what is wrong. A host
// with a ':' must be in brackets: "127.0.0.1:0:0" and "::1:80" are refused, not split at their
// last ':'. Flags check it while parsing with listen_address() (flags.h), which puts the flag's
// name first.
ListenAddress parse_listen(std::string_view text);

using ServerTuning = http::ServerTuning;

// http::bind_server (TCP_NODELAY, the thread pool, the keep-alive count, SO_REUSEADDR, the
// backlog) on `address`, then prints `listening on HOST:PORT` (the bound port) as one flushed line
// on stdout. Returns the bound port. Throws webhooks::Error(io) when the address cannot be bound.
// Then call server.listen_after_bind().
int bind_and_announce(httplib::Server& server, const ListenAddress& address,
                      const ServerTuning& tuning = {});

// glibc malloc arenas a daemon may use (M_ARENA_MAX).
inline constexpr int kMallocArenas = 2;
// Free memory at the top of a malloc heap that glibc keeps instead of returning it to the kernel
// (M_TRIM_THRESHOLD), bytes.
inline constexpr int kMallocTrimThreshold = 64 * 1024 * 1024;

// Tunes glibc's malloc for a server, unless MALLOC_ARENA_MAX or GLIBC_TUNABLES is set in the
// environment (then those apply). Call first thing in main(), before any thread starts.
// - Caps the arenas at kMallocArenas. By default glibc gives up to 8 arenas per core to the
//   threads that allocate at once, and each keeps the memory it once held: with ingest and
//   delivery running together webhooks-publisherd's resident memory grew from 16.8 MB to 35.8 MB
//   over 370k requests and kept growing, while its live heap stayed at about 3.6 MB
//   (bench_publisher, "memory under load", in docs/operations.md).
// - Keeps up to kMallocTrimThreshold of freed memory at the top of each heap. glibc's default
//   (128 KiB, raised only by its dynamic mmap threshold) handed a worker arena's top back to the
//   kernel (madvise) and faulted it in again on nearly every group of requests: under 64
//   connections merchant-receiver spent about a fifth of its CPU in that churn (page faults, TLB
//   shoot-downs, heap trims; docs/benchmarks.md, "Peers"), and handled 20-40 % more new events a
//   second without it.
// Returns the arena cap set, or 0 when the environment's settings apply or mallopt refused.
int tune_malloc();

// Ignores SIGPIPE (httplib writes without MSG_NOSIGNAL) and blocks SIGTERM and SIGINT in the
// calling thread, so threads started afterwards inherit the mask. Call first thing in main().
void block_stop_signals();

// Waits for SIGTERM or SIGINT on its own thread and then stops the server with
// http::stop_server(server, port) (`port`: the bound port, as bind_and_announce returns it; open
// keep-alive connections end at once), once the server is running: a signal that comes between
// bind and listen_after_bind() (httplib's stop() does nothing before) still stops it. The
// destructor ends the waiting thread if no signal came. Requires block_stop_signals() first.
class StopOnSignal {
 public:
  StopOnSignal(httplib::Server& server, int port);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  std::atomic<bool> released_{false};  // set by the destructor: stop waiting for the server
  std::thread thread_;
};

// Shuts down (both directions) the TCP connection that carries `req`, from inside its handler,
// so the client sees the connection close without any answer (http::connection_socket finds
// it). Returns false when no such socket was found.
bool drop_connection(const httplib::Request& req);

// Sets `body` as the application/json answer with `status`.
void json_answer(httplib::Response& res, int status, std::string body);
// `{"error":{"code":code,"message":message}}` with `status`.
void json_error(httplib::Response& res, int status, std::string_view code,
                std::string_view message);

// The bearer token of a request (http::bearer_token, webhooks/http_server.h).
using http::bearer_token;

}  // namespace webhooks::app
