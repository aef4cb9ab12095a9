// The answers the event loop under webhooks::http::Server (detail/event_loop.h) writes itself,
// without cpp-httplib: refusals before a request is handed over (the request parser's, 408, 503
// server_busy) and 503 while stopping.
// Each ends its connection.
#pragma once

#include <string>
#include <string_view>

namespace webhooks::http::detail {

// A whole HTTP/1.1 answer with "Connection: close" and a JSON error body
// (idempotency::error_body(code, message)), Content-Length and Content-Type: application/json;
// no body after a HEAD (`head`), the same headers. `header`: one more header line without its
// CRLF ("Retry-After: 1"), or "". Reason phrases: 400, 408, 411, 414, 415, 431, 501, 503, 505;
// "Error" for any other status.
std::string closing_answer(int status, std::string_view code, const std::string& message, bool head,
                           std::string_view header = {});

// closing_answer(503, "server_stopping", "the server is stopping; retry", head, "Retry-After: 1").
std::string stopping_answer(bool head);

// Sends what the socket takes now, without waiting (MSG_DONTWAIT, no SIGPIPE); the rest is lost.
// A closing answer is small, and a client that does not read it loses it.
void send_now(int fd, const std::string& data);

}  // namespace webhooks::http::detail
