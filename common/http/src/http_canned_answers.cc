// The answers the event loop writes itself (detail/canned_answers.h).
#include <sys/socket.h>

#include <cerrno>

#include "detail/canned_answers.h"
#include "webhooks/error_body.h"

namespace webhooks::http::detail {
namespace {

const char* reason(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

}  // namespace

std::string closing_answer(int status, std::string_view code, const std::string& message, bool head,
                           std::string_view header) {
  const std::string body = error_body(code, message);
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) +
                    "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nContent-Type: application/json\r\n";
  if (!header.empty()) {
    out += header;
    out += "\r\n";
  }
  out += "\r\n";
  if (!head) out += body;
  return out;
}

std::string stopping_answer(bool head) {
  return closing_answer(503, "server_stopping", "the server is stopping; retry", head,
                        "Retry-After: 1");
}

void send_now(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n =
        ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return;
    }
  }
}

}  // namespace webhooks::http::detail
