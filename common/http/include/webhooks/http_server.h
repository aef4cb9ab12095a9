// A cpp-httplib server set up against cpp-httplib's traps (docs/security.md, "Request bodies and
// what cpp-httplib does not bound", "Limits"; docs/operations.md, --max-endpoint-connections);
// every server of the toolkit (the receiver adapter, the publisher daemon, the example servers)
// is a webhooks::http::Server and binds through bind_server.
//
//   webhooks::http::Server server;  // a httplib::Server: routes, handlers, listen as usual
//   const int port = webhooks::http::bind_server(server, "127.0.0.1", 0);  // 0: a free port
//   server.listen_after_bind();
//
// cpp-httplib 0.11 as Debian builds it serves each connection on one pool thread for the
// connection's whole life (its keep-alive waits included, with per-recv timeouts only), so 64
// idle or trickling connections hold all 64 threads and every other client waits. Server reads
// requests on one event-loop thread instead (epoll) and hands only complete requests to its
// worker threads. It also leaves TCP_NODELAY off (every answer then waits ~40 ms for the client's
// delayed ACK), closes keep-alive connections after 5 requests and listens with a backlog of 5;
// tune_server() fixes those three for any httplib::Server.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace webhooks::http {

// The request body limit every server of the toolkit uses unless told otherwise: 1 MiB.
inline constexpr std::size_t kDefaultBodyLimit = 1024 * 1024;

struct ServerTuning {
  // Worker threads. For a webhooks::http::Server they run handlers only (a connection holds one
  // while its request is handled and its answer written); for a plain httplib::Server each serves
  // one keep-alive connection at a time, so size it to the expected concurrent connections.
  std::size_t threads = 64;
  // A webhooks::http::Server only: when not 0, handlers run on fibers (user-space threads) on this
  // many worker threads instead, `threads` unused (docs/http-server.md, "Fiber workers"). A handler
  // waiting for a group commit (idempotency::GroupCommit: the receiver, the guard, the publisher's
  // ingest) then lets its thread serve other requests, with no kernel context switch. For
  // handlers that do not block otherwise (their database work aside): one that waits on a
  // network call or a lock holds up every request on its thread. Typically the number of cores.
  std::size_t fiber_threads = 0;
  // Requests served on one keep-alive connection before it is closed (httplib's default: 5).
  std::size_t keep_alive_max_count = 100'000;
  // listen(2) backlog, applied again after bind (Debian's httplib compiles in 5).
  int backlog = 4096;

  // The limits below apply to a webhooks::http::Server only (docs/security.md, "Limits").
  // Open client connections at most. A connection accepted beyond it closes the one idle the
  // longest (no request under way), else the one whose request has been arriving the longest,
  // else (every connection is with a worker) waits until one comes back (at most 1,024 such
  // connections wait; more are closed at once). bind_server raises the
  // process's open-file limit (RLIMIT_NOFILE) towards max_connections + 1024 where the hard limit
  // allows, and lowers the cap to the soft limit minus 256 where it does not.
  std::size_t max_connections = 4096;
  // From a request's first byte until its head and its whole Content-Length body are received;
  // past it the request is answered 408 request_timeout and the connection closed. Also bounds
  // writing one answer to a client that does not read it.
  std::chrono::milliseconds request_timeout{30'000};
  // Header fields (lines after the request line) in one request head: 431 beyond.
  std::size_t max_header_count = 100;
  // Bytes of one request head (request line, header lines, the blank line): 431 beyond. One line
  // is also limited by cpp-httplib to 8 KiB (400; a request line: 414).
  std::size_t max_header_bytes = 64 * 1024;
  // Request bytes (heads and bodies being received or waiting for a handler) that the
  // webhooks::http::Server instances of this process buffer at once, all connections of all of
  // them together; each server checks the process's total against its own value. A request whose
  // whole Content-Length body would take the total past it is answered 503 server_busy with
  // Retry-After: 1 and its connection closed, before its body is read (a request of more than
  // 64 KiB may take only 7/8 of the budget, so that small requests are still served while slow
  // large bodies hold the rest). Peak memory for request bytes is then about this much, whatever
  // max_connections and the body limit allow (docs/security.md, "Limits").
  std::size_t max_buffered_bytes = 64 * 1024 * 1024;
  // stop_server: how long open keep-alive connections stay open after the stop, so that a
  // request sent on one meanwhile gets 503 server_stopping instead of a reset; the wait ends
  // earlier once every connection is closed. A plain server.stop() does not wait.
  std::chrono::milliseconds stop_drain{1000};
};

namespace detail {
class EventLoop;
class EventLoops;
}  // namespace detail

// A httplib::Server whose connections are read on one event-loop thread, so that slow, idle or
// many clients cost no worker thread (docs/security.md, "Limits"). Routes, handlers and
// listen_after_bind() are httplib's; bind_server applies a ServerTuning (without it the defaults
// apply). Differences from httplib::Server:
//   - a request reaches a worker thread only once its head and its Content-Length body are all
//     received, within tuning.request_timeout (408), max_header_count and max_header_bytes (431),
//     and its head passed one strict RFC 9112 parser: malformed framing is answered 400 (411,
//     414, 415, 501, 505) with Connection: close before any handler or cpp-httplib's own parsing
//     sees it (docs/security.md, "What the HTTP edge refuses"); a body over the payload limit is
//     handed over at once and answered 413 by httplib, then discarded as it arrives;
//   - header values reach handlers byte for byte (cpp-httplib 0.11 alone percent-decodes them);
//   - a client that half-closes after whole requests is answered, then the connection closed;
//   - the request bytes buffered by all servers of the process are bounded by
//     tuning.max_buffered_bytes (503 server_busy);
//   - an idle keep-alive connection waits in the event loop (closed after httplib's keep-alive
//     timeout, set_keep_alive_timeout, 5 s by default), and at most tuning.max_connections are
//     open;
//   - every route reads its body as bytes (req.body), whatever its Content-Type: httplib would
//     parse an application/x-www-form-urlencoded body into req.params (and answer 413 over
//     8 KiB) and a multipart/form-data body into req.files. Routes registered through this class
//     (Get, Post, Put, Patch, Delete, Options with a Handler) see the request's Content-Type as
//     sent; a route registered through a httplib::Server& sees those two types with a leading
//     space (the way their parsing is turned off);
//   - server.stop() closes idle connections at once; stop_server() (below) drains.
class Server : public httplib::Server {
 public:
  Server();
  ~Server() override;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  using httplib::Server::Delete;
  using httplib::Server::Get;
  using httplib::Server::Options;
  using httplib::Server::Patch;
  using httplib::Server::Post;
  using httplib::Server::Put;
  Server& Get(const std::string& pattern, Handler handler);
  Server& Post(const std::string& pattern, Handler handler);
  Server& Put(const std::string& pattern, Handler handler);
  Server& Patch(const std::string& pattern, Handler handler);
  Server& Delete(const std::string& pattern, Handler handler);
  Server& Options(const std::string& pattern, Handler handler);

  // The limits used from the next listen_after_bind() on (bind_server sets them).
  void set_tuning(const ServerTuning& tuning);
  const ServerTuning& tuning() const { return tuning_; }

  // Client connections open now, and of those the ones idle between requests (0 when not
  // listening), for tests and metrics.
  std::size_t open_connections() const;
  std::size_t idle_connections() const;

 private:
  friend class detail::EventLoop;
  friend void stop_server(httplib::Server& server, int port);
  bool process_and_close_socket(socket_t sock) override;
  // cpp-httplib's processing of one buffered request. `raw_head`: the request's head as received
  // when a header value holds '%' (cpp-httplib 0.11 percent-decodes values; they are restored
  // from it, byte for byte), else empty.
  bool serve(httplib::Stream& stream, std::string_view raw_head, bool close_connection,
             bool& connection_closed);
  std::size_t payload_limit() const { return payload_max_length_; }
  std::chrono::seconds keep_alive_timeout() const {
    return std::chrono::seconds(keep_alive_timeout_sec_);
  }
  std::size_t keep_alive_max() const { return keep_alive_max_count_; }
  std::shared_ptr<detail::EventLoops> current_loop() const;

  ServerTuning tuning_;
  mutable std::mutex loop_mutex_;
  std::shared_ptr<detail::EventLoops> loop_;  // from the first listen_after_bind()
};

// For a handler on fiber workers (ServerTuning::fiber_threads): runs `work`, which may block for
// long (a call to another service, a sleep between its retries), on a thread of its own while the
// handler's fiber is suspended, so that the worker thread serves other requests meanwhile
// (docs/http-server.md, "Fiber workers"). Returns what `work` returns and rethrows what it throws.
// Anywhere else (a pool thread, a thread of the caller's own, inside a database transaction,
// where the fiber may not suspend) it runs `work` right here. `work` may run on another thread
// than the handler: it must not rely on thread-local state. The calls run on up to 64 threads
// kept for reuse (fibers::run_on_thread's, which PostgreSQL calls made on fibers share,
// webhooks/db.h); more wait for one to come free. Throws std::system_error when not one thread
// can be started.
void run_blocking(const std::function<void()>& work);
template <typename Work>
auto run_blocking(Work&& work)
    -> std::enable_if_t<!std::is_void_v<std::invoke_result_t<Work&>>, std::invoke_result_t<Work&>> {
  std::optional<std::invoke_result_t<Work&>> result;
  run_blocking(std::function<void()>([&] { result.emplace(work()); }));
  return std::move(*result);
}

// Sets TCP_NODELAY, the keep-alive count, SO_REUSEADDR (not httplib's default SO_REUSEPORT, which
// would let two servers share a port), and a thread pool of tuning.threads (a webhooks::http::
// Server: its workers and limits, set_tuning). Called by bind_server; call it yourself only to
// bind some other way.
void tune_server(httplib::Server& server, const ServerTuning& tuning = {});

// tune_server, then binds host:port (port 0: a free port; an IPv6 host without brackets), then
// listen(fd, tuning.backlog). Returns the bound port. Throws webhooks::Error(io) when the address
// cannot be bound. Then call server.listen_after_bind() (blocks until server.stop()).
int bind_server(httplib::Server& server, const std::string& host, int port,
                const ServerTuning& tuning = {});

// On a webhooks::http::Server, the request parser under it refuses the malformed framing listed
// below before these checks run; they remain for a plain httplib::Server.
//
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
//
// With `bodies` = Bodies::json (the toolkit's JSON APIs), a POST, PUT or PATCH whose Content-Type
// is present and not JSON (is_json_media_type) is answered 415 unsupported_media_type after
// `then` let it through and before its body is read (so the connection is closed after it, as
// above). A request without Content-Type is read as JSON. And a request whose path or query
// parameters, percent-decoded, are not UTF-8 or hold a NUL byte (GET /orders/%ff) is answered
// 400 invalid_request before any handler: PostgreSQL cannot take such text as a parameter.
// One exception: a POST to a path under kConsoleFormPrefix may be application/x-www-form-urlencoded
// (an HTML console's sign-in and sign-out forms, webhooks::console); its bytes are in req.body.
// Bodies::json_or_form is Bodies::json that also takes a form POST on any path (GitHub's form
// deliveries, docs/receiver.md), its bytes in req.body.
enum class Bodies { any, json, json_or_form };
inline constexpr std::string_view kConsoleFormPrefix = "/console/";
void limit_request_bodies(httplib::Server& server, std::size_t limit,
                          httplib::Server::HandlerWithResponse then = nullptr,
                          Bodies bodies = Bodies::any);

// Sets `body` as the answer's body with Content-Type: application/json (replacing one set
// before), as Response::set_content(body, "application/json") does, but moving the body in
// instead of copying it and building no string for the header per answer.
void set_json_body(httplib::Response& res, std::string body);

// Whether a Content-Type value names JSON: application/json or application/<anything>+json, in
// any letter case, with any parameters (charset=utf-8), with or without surrounding whitespace.
bool is_json_media_type(std::string_view content_type);
// The token of `Authorization: Bearer TOKEN` (RFC 6750, section 2.1), or "" when the header is
// absent or of another scheme: the scheme in any letter case (RFC 9110, section 11.1: "bearer X"
// is the same), spaces around the token dropped. The one bearer parser of every server here (the
// publisher's admin API, orders-api's API keys). A view into `req`'s header (not a copy), valid
// while `req` is.
std::string_view bearer_token(const httplib::Request& req);

// The canonical name of a header every server here takes at most one line of, when `name` (any
// letter case) is one, else "": Content-Length, Host, Authorization, Content-Type, the
// idempotency keys, and the signature and id headers of Standard Webhooks, Svix and the providers
// (a second line is answered 400 bad_request "send one <name> header"; docs/security.md).
std::string_view single_header(std::string_view name);

// Whether a Content-Type value names application/x-www-form-urlencoded, in any letter case, with
// any parameters, with or without surrounding whitespace.
bool is_form_media_type(std::string_view content_type);

// For a route that reads a JSON body: when `req` has a Content-Type that is not JSON, answers
// 415 unsupported_media_type ({"error":{"code","message"}}, the message naming the type and
// `accepted`: "send the body as application/json, not text/plain") and returns true. A request
// without Content-Type passes (read as JSON).
bool refuse_unless_json(const httplib::Request& req, httplib::Response& res,
                        std::string_view accepted = "application/json");

// The socket descriptor of the TCP connection that carries `req`, for a handler that must act on
// the connection itself (cpp-httplib 0.11 does not hand it over): the process's one socket whose
// local and remote address and port are req's. Scans /proc/self/fd, so use it only on rare paths
// (refusals, injected faults). Returns -1 when none is found. Do not close the descriptor:
// cpp-httplib owns it; shutdown(2) is the way to end the connection.
int connection_socket(const httplib::Request& req);

// A webhooks::http::Server: requests that come after the call (on open keep-alive connections, or
// queued for a worker) get 503 server_stopping (Retry-After: 1, Connection: close) without
// reaching a handler; requests being handled finish and their answers are written (waited for at
// most 5 seconds); the open connections stay open for tuning.stop_drain (or until none is left),
// then are closed. Blocks until then; listen_after_bind() returns once the handlers still running
// have finished.
//
// A plain httplib::Server: stops `server` (bound by bind_server on `port`, with
// limit_request_bodies installed) without
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
