// The connection a webhooks::http::Server worker thread is serving, for the code that must act on
// the connection under a request (closing answers, connection_socket) without scanning
// /proc/self/fd.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace webhooks::http::detail {

// Closing: after the last answer what the client still sends is discarded for this long or this
// many bytes (RFC 9112, section 9.6), so a client still sending reads the answer, not a reset.
// The event loop's connections and the cpp-httplib server's (connection.cc) alike.
inline constexpr auto kLingerTime = std::chrono::seconds(1);
inline constexpr std::size_t kLingerBytes = 8 * 1024 * 1024;

class ServedConnection {
 public:
  // The socket; owned by the server (shutdown(2) ends the connection, never close(2)).
  virtual int fd() const = 0;
  // Whether this is the connection between these addresses (as httplib fills a Request's).
  virtual bool joins(const std::string& local_addr, int local_port, const std::string& remote_addr,
                     int remote_port) const = 0;
  // After the answer being written, the connection is half-closed, what the client still sends is
  // discarded for up to 1 second or 8 MiB by the event loop (no worker waits), then it is closed.
  virtual void close_after_answer() = 0;
  // Nothing more is written on the connection; it is closed at once after the request.
  virtual void abandon() = 0;

 protected:
  ~ServedConnection() = default;
};

// The connection this thread is serving, or nullptr (not a webhooks::http::Server worker, or
// between requests).
ServedConnection* served_connection();
void set_served_connection(ServedConnection* connection);

}  // namespace webhooks::http::detail
