// The connection under a request: finding its socket, and answers that end it.
#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <memory>

#include "detail/closing_answer.h"
#include "detail/served_connection.h"
#include "webhooks/http_server.h"

namespace webhooks::http {
namespace {

struct Address {
  std::string host;
  int port = -1;
  bool operator==(const Address&) const = default;
};

// The numeric host and port of a socket's end, formatted as cpp-httplib formats
// Request::remote_addr and local_addr (getnameinfo, NI_NUMERICHOST).
Address address_of(int fd, bool peer) {
  sockaddr_storage addr{};
  socklen_t length = sizeof addr;
  auto* raw = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(fd, raw, &length) : ::getsockname(fd, raw, &length)) != 0) return {};
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> port{};
  if (::getnameinfo(raw, length, host.data(), host.size(), port.data(), port.size(),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return {};
  }
  return {host.data(), std::atoi(port.data())};
}

// Calls `visit(fd)` for each socket the process has open, until it returns true. Returns that
// socket, or -1.
template <typename Visit>
int find_socket(Visit&& visit) {
  std::unique_ptr<DIR, int (*)(DIR*)> fds(::opendir("/proc/self/fd"), ::closedir);
  if (!fds) return -1;
  while (const dirent* entry = ::readdir(fds.get())) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0') continue;
    struct stat info {};
    if (::fstat(static_cast<int>(fd), &info) != 0 || !S_ISSOCK(info.st_mode)) continue;
    if (visit(static_cast<int>(fd))) return static_cast<int>(fd);
  }
  return -1;
}

// The process's one socket between `local` and `remote`, or -1.
int socket_between(const Address& local, const Address& remote) {
  return find_socket(
      [&](int fd) { return address_of(fd, true) == remote && address_of(fd, false) == local; });
}

// Half-closes `fd` and discards what the client still sends, until it closes, detail::kLingerTime
// passes or detail::kLingerBytes are read.
void linger(int fd) {
  ::shutdown(fd, SHUT_WR);
  const auto deadline = std::chrono::steady_clock::now() + detail::kLingerTime;
  std::array<char, 64 * 1024> sink{};
  std::size_t discarded = 0;
  while (discarded < detail::kLingerBytes) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, static_cast<int>(left.count())) <= 0) return;
    const ssize_t n = ::recv(fd, sink.data(), sink.size(), MSG_DONTWAIT);
    if (n <= 0) return;
    discarded += static_cast<std::size_t>(n);
  }
}

// The webhooks::http::Server connection this thread serves, when it is the one between these
// addresses.
detail::ServedConnection* served(const Address& local, const Address& remote) {
  detail::ServedConnection* c = detail::served_connection();
  return c && c->joins(local.host, local.port, remote.host, remote.port) ? c : nullptr;
}

}  // namespace

int connection_socket(const httplib::Request& req) {
  if (auto* c = served({req.local_addr, req.local_port}, {req.remote_addr, req.remote_port})) {
    return c->fd();
  }
  return socket_between({req.local_addr, req.local_port}, {req.remote_addr, req.remote_port});
}

namespace detail {

void abandon_connection(const httplib::Request& req) {
  if (auto* c = served({req.local_addr, req.local_port}, {req.remote_addr, req.remote_port})) {
    c->abandon();
    return;
  }
  const int fd =
      socket_between({req.local_addr, req.local_port}, {req.remote_addr, req.remote_port});
  int dead[2];
  if (fd < 0 || ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, dead) != 0) return;
  ::close(dead[1]);
  ::dup2(dead[0], fd);  // closes the TCP connection; fd now reads end-of-stream, writes fail
  ::close(dead[0]);
}

void half_close_connections(int port) {
  find_socket([port](int fd) {
    // Accepted connections have the listening port as their local port and a peer; the
    // process's own outgoing connections have an ephemeral local port.
    if (address_of(fd, false).port == port && address_of(fd, true).port >= 0) {
      ::shutdown(fd, SHUT_RD);
    }
    return false;
  });
}

void answer_and_close(const httplib::Request& req, httplib::Response& res, std::string body,
                      const std::string& content_type) {
  const std::size_t length = body.size();
  // A content provider that returns false after writing the answer makes cpp-httplib treat the
  // write as failed, leave its keep-alive loop and close the socket.
  res.set_content_provider(
      length, content_type,
      [body = std::move(body), local = Address{req.local_addr, req.local_port},
       remote = Address{req.remote_addr, req.remote_port}](std::size_t offset, std::size_t,
                                                           httplib::DataSink& sink) {
        if (offset == 0 && sink.write(body.data(), body.size())) {
          if (auto* c = served(local, remote)) {
            c->close_after_answer();  // the event loop lingers; no worker waits
          } else if (const int fd = socket_between(local, remote); fd >= 0) {
            linger(fd);
          }
        }
        return false;
      });
}

}  // namespace detail
}  // namespace webhooks::http
