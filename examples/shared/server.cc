#include "webhooks/examples/server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "webhooks/error.h"
#include "webhooks/idempotency/guard.h"

namespace webhooks::examples {
namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

// True when `addr` is `host`:`port` in httplib's numeric notation.
bool is_endpoint(const sockaddr_storage& addr, const std::string& host, int port) {
  char text[INET6_ADDRSTRLEN] = {};
  int actual = -1;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    actual = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    actual = ntohs(in6->sin6_port);
  } else {
    return false;
  }
  return actual == port && host == text;
}

}  // namespace

ListenAddress parse_listen(std::string_view text) {
  const std::string value(text);
  const auto bad = [](const std::string& why) {
    return Error(ErrorCode::invalid_argument, why + " (expected HOST:PORT)");
  };
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) throw bad(value + " has no port");
  if (colon == 0) throw bad(value + " has no host");
  std::string host(text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string_view port_text = text.substr(colon + 1);
  int port = -1;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port < 0 || port > 65535) {
    throw bad("the port of " + value + " must be a number from 0 to 65535");
  }
  return {host, port};
}

int bind_and_announce(httplib::Server& server, const ListenAddress& address,
                      const ServerTuning& tuning) {
  const int port = http::bind_server(server, address.host, address.port, tuning);
  const bool v6 = address.host.find(':') != std::string::npos;
  std::cout << "listening on " << (v6 ? "[" + address.host + "]" : address.host) << ":" << port
            << std::endl;
  return port;
}

void block_stop_signals() {
  signal(SIGPIPE, SIG_IGN);
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

StopOnSignal::StopOnSignal(httplib::Server& server)
    : thread_([&server] {
        const sigset_t set = stop_signals();
        int signal_number = 0;
        if (sigwait(&set, &signal_number) == 0) server.stop();  // harmless once stopped
      }) {}

StopOnSignal::~StopOnSignal() {
  // Wakes the waiting thread if no signal came; after a signal it has returned already, and a
  // second one stays pending on a thread that is about to end.
  pthread_kill(thread_.native_handle(), SIGTERM);
  thread_.join();
}

bool drop_connection(const httplib::Request& req) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return false;
  bool dropped = false;
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    sockaddr_storage local{}, peer{};
    socklen_t local_len = sizeof local, peer_len = sizeof peer;
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
        getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) {
      continue;
    }
    if (is_endpoint(local, req.local_addr, req.local_port) &&
        is_endpoint(peer, req.remote_addr, req.remote_port)) {
      dropped = ::shutdown(static_cast<int>(fd), SHUT_RDWR) == 0;
      break;
    }
  }
  closedir(dir);
  return dropped;
}

void json_answer(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

void json_error(httplib::Response& res, int status, std::string_view code,
                std::string_view message) {
  json_answer(res, status, idempotency::error_body(code, message));
}

std::string bearer_token(const httplib::Request& req) {
  const std::string value = req.get_header_value("Authorization");
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() <= kScheme.size()) return {};
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) != kScheme[i]) return {};
  }
  std::size_t begin = kScheme.size(), end = value.size();
  while (begin < end && value[begin] == ' ') ++begin;
  while (end > begin && value[end - 1] == ' ') --end;
  return value.substr(begin, end - begin);
}

}  // namespace webhooks::examples
