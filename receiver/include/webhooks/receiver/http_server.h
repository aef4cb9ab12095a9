// cpp-httplib glue: a server set up against cpp-httplib's traps (webhooks/http_server.h), and a
// receiver mounted on a route in one line.
//
//   httplib::Server server;
//   webhooks::receiver::mount(server, "/webhooks", receiver, handler);
//   const int port = webhooks::receiver::bind_server(server, "127.0.0.1", 8783);
//   server.listen_after_bind();
//   // on another thread, to stop: webhooks::receiver::stop_server(server, port);
//
// The server set-up (TCP_NODELAY, pool, keep-alive count, backlog) is webhooks/http_server.h.
#pragma once

#include <httplib.h>

#include <string>

#include "webhooks/http_server.h"
#include "webhooks/receiver/receiver.h"

namespace webhooks::receiver {

// The tuned server of webhooks/http_server.h, under the receiver's names.
using http::bind_server;
using http::limit_request_bodies;
using http::ServerTuning;
using http::stop_server;
using http::tune_server;

// The request's headers, for Receiver::handle: a view of request.headers (Headers::view), not a
// copy, so valid while `request` is (the whole handler).
Headers headers_of(const httplib::Request& request);
// Writes `answer` (status, headers, JSON body, Content-Type: application/json) into `response`.
// The second form moves the body instead of copying it.
void write_answer(const Answer& answer, httplib::Response& response);
void write_answer(Answer&& answer, httplib::Response& response);

// Serves POST `route` with `receiver` and `handler`: a JSON body (a body with another
// Content-Type is 415 unsupported_media_type), or for Provider::github also a form
// (application/x-www-form-urlencoded, GitHub's "payload=" encoding). `receiver` must outlive the
// server. Also
// limits the server's request bodies to receiver.config().max_body_bytes before they are read
// (http::limit_request_bodies: 413, or 411 for a chunked body), which sets the server's
// pre-routing handler: pass your own to limit_request_bodies instead of setting it.
void mount(http::Server& server, const std::string& route, Receiver& receiver, Handler handler);
void mount(http::Server& server, const std::string& route, Receiver& receiver,
           TransactionalHandler handler);

}  // namespace webhooks::receiver
