// The whole publisher in one object: it opens and migrates the database, and owns the queue
// (Store), the ingest with its idempotency guard, the admin API, the metrics, the delivery
// workers (Dispatcher over HttpTransport) and the idempotency maintenance. webhooks-publisherd,
// the tests and bench_publisher all build it this way (docs/operations.md, "Embedding the
// publisher"):
//
//   webhooks::publisher::Options options;         // options.h: every default
//   options.admin_token = token;
//   webhooks::publisher::Publisher publisher(options);
//   webhooks::http::Server server;
//   publisher.mount(server);                      // the API: ingest, admin, /healthz, /metrics
//   const int port = webhooks::http::bind_server(server, "127.0.0.1", 8780, options.server);
//   publisher.start();                            // delivery workers, maintenance
//   server.listen_after_bind();                   // until stopped
//   webhooks::http::stop_server(server, port);    // (from a signal handler thread, say)
//   publisher.stop();                             // in-flight batches finish and are recorded
//
// Lifecycle: built -> start() -> running -> stop() -> stopped. Ingest works from construction:
// an event accepted before start() (or after stop()) waits in the database until a running
// Publisher on the same database delivers it.
//
// Order of shutdown: stop the HTTP server first (http::stop_server: requests being handled
// finish, so no ingest is cut short), then stop(): (1) the workers stop claiming, the batches in
// flight finish and their attempts are recorded (retried while the database fails, at most
// DispatcherOptions::record_retry_after_stop), the threads are joined; (2) the maintenance thread
// and the retention thread are joined. The destructor calls stop(), then closes the components in
// reverse order of construction, the database last. A server the Publisher is mounted on must be
// stopped before the Publisher is destroyed.
//
// Thread safety: start() and stop() may be called from any thread, also together (they take one
// lock); mount() while no server it is given is running. The mounted routes and the accessors'
// objects are thread-safe as their own headers say.
#pragma once

#include <memory>
#include <mutex>

#include "webhooks/db.h"
#include "webhooks/http_server.h"
#include "webhooks/publisher/options.h"

namespace webhooks::idempotency {
class Guard;
}

namespace webhooks::publisher {

class Store;
class Ingest;
class Dispatcher;
class Metrics;

class Publisher {
 public:
  // Checks `options` (validate()), opens options.database, migrates it, and builds every
  // component; starts the idempotency lease keeper's thread (ingest needs it), not the workers.
  // Throws Error(invalid_argument) for options outside their domain (the message names the
  // field) or an unknown sqlite_synchronous, Error(storage) when the database cannot be opened
  // or migrated.
  explicit Publisher(Options options);
  // stop(), then closes everything.
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Registers the API's routes, authentication, body limit and JSON errors on `server`
  // (src/api/admin_api.h). Logs the warning `no_admin_token` when options.admin_token is empty.
  void mount(http::Server& server);

  // Starts options.workers delivery threads and the maintenance thread. Calling it again while
  // running does nothing. Throws Error(invalid_argument) once stop() was called: a stopped
  // Publisher does not start again (build a new one).
  void start();

  // Stops the workers and the maintenance in the order above and returns when they are joined.
  // Idempotent: a second call does nothing. Without start() it only marks the Publisher
  // stopped (start() then throws). Throws nothing.
  void stop() noexcept;

  // The components, for callers that drive them directly (tests run dispatcher().run_once()
  // without start(); an embedder calls ingest().publish()). Valid while the Publisher lives.
  const Options& options() const;
  db::Database& database();
  Store& store();
  Ingest& ingest();
  Dispatcher& dispatcher();
  Metrics& metrics();
  idempotency::Guard& guard();

 private:
  struct Parts;
  enum class State { built, running, stopped };

  std::unique_ptr<Parts> parts_;
  std::mutex mutex_;  // guards state_ (start() and stop())
  State state_ = State::built;
};

}  // namespace webhooks::publisher
