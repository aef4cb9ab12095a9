// A cpp-httplib server set up the way DESIGN.md's "Known library traps" require; every server of
// the toolkit (the receiver adapter, the publisher daemon, the example servers) binds through it.
//
//   httplib::Server server;
//   const int port = webhooks::http::bind_server(server, "127.0.0.1", 0);  // 0: a free port
//   server.listen_after_bind();
//
// cpp-httplib 0.11 as Debian builds it leaves TCP_NODELAY off (every answer then waits ~40 ms for
// the client's delayed ACK), serves each connection on one of 8 pool threads, closes keep-alive
// connections after 5 requests and listens with a backlog of 5. tune_server() fixes all four.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <string>

namespace webhooks::http {

struct ServerTuning {
  // Worker threads; each serves one keep-alive connection at a time, so size it to the expected
  // concurrent connections (the publisher's connection pool, a load balancer's).
  std::size_t threads = 64;
  // Requests served on one keep-alive connection before it is closed (httplib's default: 5).
  std::size_t keep_alive_max_count = 100'000;
  // listen(2) backlog, applied again after bind (Debian's httplib compiles in 5).
  int backlog = 4096;
};

// Sets TCP_NODELAY, a thread pool of tuning.threads, the keep-alive count, and SO_REUSEADDR (not
// httplib's default SO_REUSEPORT, which would let two servers share a port). Called by
// bind_server; call it yourself only to bind some other way.
void tune_server(httplib::Server& server, const ServerTuning& tuning = {});

// tune_server, then binds host:port (port 0: a free port; an IPv6 host without brackets), then
// listen(fd, tuning.backlog). Returns the bound port. Throws webhooks::Error(io) when the address
// cannot be bound. Then call server.listen_after_bind() (blocks until server.stop()).
int bind_server(httplib::Server& server, const std::string& host, int port,
                const ServerTuning& tuning = {});

}  // namespace webhooks::http
