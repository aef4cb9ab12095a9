// Answers that end their connection: used where a request is refused before its body is read, so
// the unread body can never be parsed as the connection's next request.
#pragma once

#include <httplib.h>

#include <string>

namespace webhooks::http::detail {

// Sets `body` as the answer's content so that cpp-httplib (0.11), once it has written the whole
// answer, closes the connection instead of reading another request from it. Before the close, the
// connection is half-closed (FIN after the answer) and what the client still sends is read and
// discarded for up to 1 second or 8 MiB (RFC 9112, section 9.6, "tear-down"), so a client still
// sending its body gets the answer rather than a reset. Needs the request's addresses as
// cpp-httplib fills them (remote_addr/port, local_addr/port).
void answer_and_close(const httplib::Request& req, httplib::Response& res, std::string body,
                      const std::string& content_type);

// Ends the connection that carries `req` at once, without an answer, for a request whose answer
// cpp-httplib would write without closing (a HEAD: it never calls a content provider for one):
// the socket's descriptor is replaced by one that reads end-of-stream, so cpp-httplib's write
// fails and it closes the connection without reading what follows on it.
void abandon_connection(const httplib::Request& req);

// Half-closes (shutdown SHUT_RD) every connected socket of the process whose local port is
// `port`: a cpp-httplib server thread waiting for the connection's next request then sees the end
// of the stream within ~10 ms and closes it. Scans /proc/self/fd.
void half_close_connections(int port);

}  // namespace webhooks::http::detail
