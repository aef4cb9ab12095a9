#include "listen.h"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <charconv>
#include <iostream>
#include <memory>

#include "webhooks/error.h"

namespace webhooks::publisherd {
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
  const std::size_t colon = text.rfind(':');
  std::string host(colon == std::string_view::npos ? "" : text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = -1;
  const std::string_view port_text =
      colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (host.empty() || port_text.empty() || ec != std::errc() ||
      end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    throw Error(ErrorCode::invalid_argument,
                "--listen " + std::string(text) + ": expected HOST:PORT with a port 0 to 65535");
  }
  return {host, port};
}

int bind_and_announce(httplib::Server& server, const ListenAddress& address,
                      std::size_t threads) {
  server.set_tcp_nodelay(true);
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_keep_alive_max_count(100'000);
  auto listening = std::make_shared<std::atomic<int>>(-1);
  server.set_socket_options([listening](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listening->store(sock);
  });
  int port = address.port;
  if (port == 0) {
    port = server.bind_to_any_port(address.host);
  } else if (!server.bind_to_port(address.host, port)) {
    port = -1;
  }
  if (port <= 0 || listening->load() < 0) {
    throw Error(ErrorCode::io,
                "cannot listen on " + address.host + ":" + std::to_string(address.port));
  }
  if (::listen(listening->load(), 4096) != 0) throw Error(ErrorCode::io, "listen(4096) failed");
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

SignalWaiter::SignalWaiter(std::function<void()> on_stop)
    : thread_([on_stop = std::move(on_stop)] {
        const sigset_t set = stop_signals();
        int signal_number = 0;
        if (sigwait(&set, &signal_number) == 0) on_stop();
      }) {}

SignalWaiter::~SignalWaiter() {
  pthread_kill(thread_.native_handle(), SIGTERM);  // wakes it if no signal came
  thread_.join();
}

}  // namespace webhooks::publisherd
