#include "webhooks/http_server.h"

#include <sys/socket.h>

#include <atomic>
#include <memory>

#include "webhooks/error.h"

namespace webhooks::http {
namespace {

// Remembers the listening socket httplib creates, so bind_server can raise its backlog.
std::shared_ptr<std::atomic<int>> install_socket_options(httplib::Server& server) {
  auto listening = std::make_shared<std::atomic<int>>(-1);
  server.set_socket_options([listening](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listening->store(sock);
  });
  return listening;
}

void apply_tuning(httplib::Server& server, const ServerTuning& tuning) {
  server.set_tcp_nodelay(true);
  const std::size_t threads = tuning.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_keep_alive_max_count(tuning.keep_alive_max_count);
}

}  // namespace

void tune_server(httplib::Server& server, const ServerTuning& tuning) {
  apply_tuning(server, tuning);
  install_socket_options(server);
}

int bind_server(httplib::Server& server, const std::string& host, int port,
                const ServerTuning& tuning) {
  apply_tuning(server, tuning);
  const auto listening = install_socket_options(server);
  int bound = port;
  if (port == 0) {
    bound = server.bind_to_any_port(host);
  } else if (!server.bind_to_port(host, port)) {
    bound = -1;
  }
  if (bound <= 0 || listening->load() < 0) {
    throw Error(ErrorCode::io, "cannot listen on " + host + ":" + std::to_string(port));
  }
  if (::listen(listening->load(), tuning.backlog) != 0) {
    throw Error(ErrorCode::io, "listen(" + std::to_string(tuning.backlog) + ") failed");
  }
  return bound;
}

}  // namespace webhooks::http
