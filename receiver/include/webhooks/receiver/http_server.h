// cpp-httplib glue: a server set up the way DESIGN.md's "Known library traps" require, and a
// receiver mounted on a route in one line.
//
//   httplib::Server server;
//   webhooks::receiver::mount(server, "/webhooks", receiver, handler);
//   const int port = webhooks::receiver::bind_server(server, "127.0.0.1", 8783);
//   server.listen_after_bind();
//
// cpp-httplib 0.11 as Debian builds it leaves TCP_NODELAY off (every answer then waits ~40 ms for
// the client's delayed ACK), serves each connection on one of 8 pool threads, closes keep-alive
// connections after 5 requests and listens with a backlog of 5. tune_server() fixes all four.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <string>

#include "webhooks/receiver/receiver.h"

namespace webhooks::receiver {

struct ServerTuning {
  // Worker threads; each serves one keep-alive connection at a time, so size it to the expected
  // concurrent connections (the publisher's connection pool, a load balancer's).
  std::size_t threads = 64;
  // Requests served on one keep-alive connection before it is closed (httplib's default: 5).
  std::size_t keep_alive_max_count = 100'000;
  // listen(2) backlog, applied again after bind (Debian's httplib compiles in 5).
  int backlog = 4096;
};

// Sets TCP_NODELAY, a thread pool of tuning.threads, the keep-alive count, and socket options
// (SO_REUSEADDR; the listening socket is remembered so bind_server can raise its backlog).
// Called by bind_server; call it yourself only to bind some other way.
void tune_server(httplib::Server& server, const ServerTuning& tuning = {});

// tune_server, then binds host:port (port 0: a free port), then listen(fd, tuning.backlog).
// Returns the bound port. Throws Error(io) when the address cannot be bound. Then call
// server.listen_after_bind() (blocks until server.stop()).
int bind_server(httplib::Server& server, const std::string& host, int port,
                const ServerTuning& tuning = {});

// The request's headers, for Receiver::handle.
Headers headers_of(const httplib::Request& request);
// Writes `answer` (status, headers, JSON body) into `response`.
void write_answer(const Answer& answer, httplib::Response& response);

// Serves POST `route` with `receiver` and `handler`. `receiver` must outlive the server.
void mount(httplib::Server& server, const std::string& route, Receiver& receiver,
           Handler handler);
void mount(httplib::Server& server, const std::string& route, Receiver& receiver,
           TransactionalHandler handler);

}  // namespace webhooks::receiver
