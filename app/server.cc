#include "webhooks/app/server.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "webhooks/error.h"
#include "webhooks/error_body.h"
#include "webhooks/idempotency/guard.h"

namespace webhooks::app {
namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

ListenAddress parse_listen(std::string_view text) {
  const std::string value(text);
  const auto bad = [&value](const std::string& why) {
    return Error(ErrorCode::invalid_argument, value + " " + why + " (expected HOST:PORT)");
  };
  std::string_view host, port_text;
  if (text.starts_with('[')) {  // [IPv6]:PORT
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) throw bad("has no ']' after its IPv6 address");
    if (close + 1 == text.size()) throw bad("has no port");
    if (text[close + 1] != ':') throw bad("needs a ':' between ']' and the port");
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) throw bad("has no port");
    if (text.find(':', colon + 1) != std::string_view::npos) {
      throw bad("has more than one ':'; write an IPv6 host in brackets, e.g. [::1]:8080");
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (host.empty()) throw bad("has no host");
  int port = -1;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port < 0 || port > 65535) {
    throw Error(ErrorCode::invalid_argument,
                "the port of " + value + " must be a number from 0 to 65535 (expected HOST:PORT)");
  }
  return {std::string(host), port};
}

int bind_and_announce(httplib::Server& server, const ListenAddress& address,
                      const ServerTuning& tuning) {
  const int port = http::bind_server(server, address.host, address.port, tuning);
  const bool v6 = address.host.find(':') != std::string::npos;
  std::cout << "listening on " << (v6 ? "[" + address.host + "]" : address.host) << ":" << port
            << std::endl;
  return port;
}

int tune_malloc() {
  // An explicit MALLOC_ARENA_MAX or GLIBC_TUNABLES from the operator wins (and is how the
  // benchmark measures the glibc default).
  if (std::getenv("MALLOC_ARENA_MAX") != nullptr || std::getenv("GLIBC_TUNABLES") != nullptr) {
    return 0;
  }
  if (mallopt(M_TRIM_THRESHOLD, kMallocTrimThreshold) != 1) return 0;
  return mallopt(M_ARENA_MAX, kMallocArenas) == 1 ? kMallocArenas : 0;
}

void block_stop_signals() {
  signal(SIGPIPE, SIG_IGN);
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

StopOnSignal::StopOnSignal(httplib::Server& server, int port)
    : thread_([this, &server, port] {
        const sigset_t set = stop_signals();
        int signal_number = 0;
        if (sigwait(&set, &signal_number) != 0) return;
        // A signal can come before listen_after_bind() has started (the port is announced
        // first); httplib's stop() is a no-op until then, so wait for it. Only that short window
        // polls.
        while (!server.is_running() && !released_) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        http::stop_server(server, port);  // harmless once stopped
      }) {}

StopOnSignal::~StopOnSignal() {
  released_ = true;
  // Wakes the waiting thread if no signal came; after a signal it has returned already, and a
  // second one stays pending on a thread that is about to end.
  pthread_kill(thread_.native_handle(), SIGTERM);
  thread_.join();
}

bool drop_connection(const httplib::Request& req) {
  const int fd = http::connection_socket(req);
  return fd >= 0 && ::shutdown(fd, SHUT_RDWR) == 0;
}

void json_answer(httplib::Response& res, int status, std::string body) {
  res.status = status;
  http::set_json_body(res, std::move(body));
}

void json_error(httplib::Response& res, int status, std::string_view code,
                std::string_view message) {
  json_answer(res, status, error_body(code, message));
}

}  // namespace webhooks::app
