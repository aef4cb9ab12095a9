// A cpp-httplib server set up against cpp-httplib's traps (docs/security.md, "Request bodies and
// what cpp-httplib does not bound"; docs/operations.md, --max-endpoint-connections); every server
// of the toolkit (the receiver adapter, the publisher daemon, the example servers) binds through it.
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

// The request body limit every server of the toolkit uses unless told otherwise: 1 MiB.
inline constexpr std::size_t kDefaultBodyLimit = 1024 * 1024;

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

// Bounds every request body to `limit` bytes without buffering more than that, by setting the
// server's payload limit, pre-routing handler, error handler and logger (so call it once per
// server, and pass your own pre-routing check, e.g. authentication, as `then`: it runs for the
// requests let through; a later set_error_handler replaces the JSON error bodies; the logger
// counts written answers for stop_server, and after a later set_logger stop_server waits 5 s for
// requests in flight). cpp-httplib 0.11 applies its payload
// limit to Content-Length bodies only: it reads a chunked body, or a POST body without
// Content-Length, to its end with no limit. Answers, as {"error":{"code","message"}}:
//   - 413 payload_too_large: Content-Length is over `limit` (httplib discards the body unstored);
//   - 411 length_required, before the body is read: the body is sent with Transfer-Encoding
//     (chunked); send it with Content-Length, as Standard Webhooks senders and curl -d do;
//   - 400 bad_request: Content-Length is not a decimal number.
// After a 411 or that 400 the answer says Connection: close and the connection is closed: it is
// half-closed after the answer, what the client still sends is discarded for up to 1 second or
// 8 MiB (so a client still sending reads the answer rather than a reset), then it is closed. The
// unread body is never parsed as a request. The same close follows a 400 for a GET or OPTIONS
// (any method httplib reads no body for) with a non-zero Content-Length, a 400 for two
// Content-Length headers or for whitespace before a header name's colon (RFC 9112, section 5.1),
// any answer `then` gives to a request with a non-zero Content-Length (its body is unread; an
// empty answer gets a JSON error body), and cpp-httplib's own 400 or 414 for a request it cannot
// parse. A HEAD with a non-zero Content-Length is dropped unanswered (httplib writes a HEAD's
// answer without the means to close). cpp-httplib's own 416 (bad Range) keeps the connection.
// Every other error answer left without a body (httplib's 404 for an unknown route, a 400 for a
// malformed request, a handler's bare res.status = 401) gets one: not_found, bad_request,
// unauthorized, method_not_allowed, uri_too_long, internal_error for 5xx, else error.
// A POST, PUT or PATCH with neither header has an empty body (RFC 9112, section 6.3, rule 7);
// cpp-httplib 0.11 would instead wait for the client to close, so such a request is given
// "Content-Length: 0".
void limit_request_bodies(httplib::Server& server, std::size_t limit,
                          httplib::Server::HandlerWithResponse then = nullptr);

// The socket descriptor of the TCP connection that carries `req`, for a handler that must act on
// the connection itself (cpp-httplib 0.11 does not hand it over): the process's one socket whose
// local and remote address and port are req's. Scans /proc/self/fd, so use it only on rare paths
// (refusals, injected faults). Returns -1 when none is found. Do not close the descriptor:
// cpp-httplib owns it; shutdown(2) is the way to end the connection.
int connection_socket(const httplib::Request& req);

// Stops `server` (bound by bind_server on `port`, with limit_request_bodies installed) without
// cpp-httplib 0.11's wait: after stop() alone, each idle keep-alive connection keeps the server's
// listen_after_bind() from returning until its keep-alive timeout (5 seconds) runs out. Here:
// requests that come after the call get 503 server_stopping (Retry-After: 1) without reaching a
// handler; requests being handled finish and their answers are written (waited for, polling every
// millisecond; a request whose count the logger missed, at most 5 seconds); then every connection
// still open is half-closed (shutdown SHUT_RD), which ends it within ~10 ms. Counting uses the
// pre-routing handler and logger that limit_request_bodies installs: after a later
// set_pre_routing_handler or set_logger, or without limit_request_bodies, this is server.stop().
// Blocks until the connections are half-closed; listen_after_bind() returns soon after.
void stop_server(httplib::Server& server, int port);

}  // namespace webhooks::http
