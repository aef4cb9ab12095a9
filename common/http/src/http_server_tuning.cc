// Listening: socket options, the open-file limit, the backlog, and ServerTuning applied to
// cpp-httplib servers and ours (webhooks/http_server.h, tune_server and bind_server).
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>

#include "webhooks/error.h"
#include "webhooks/http_server.h"

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

// Raises the soft open-file limit towards `wanted` (up to the hard limit); returns the soft limit.
rlim_t raise_open_files(rlim_t wanted) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return wanted;
  if (limit.rlim_cur < wanted && limit.rlim_cur != RLIM_INFINITY) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

void apply_tuning(httplib::Server& server, const ServerTuning& tuning) {
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(tuning.keep_alive_max_count);
  if (auto* ours = dynamic_cast<Server*>(&server)) {
    ServerTuning applied = tuning;
    const rlim_t soft = raise_open_files(static_cast<rlim_t>(tuning.max_connections) + 1024);
    if (soft != RLIM_INFINITY && static_cast<rlim_t>(applied.max_connections) + 256 > soft) {
      applied.max_connections =
          soft > 512 ? static_cast<std::size_t>(soft - 256) : static_cast<std::size_t>(soft / 2);
    }
    ours->set_tuning(applied);
    return;
  }
  const std::size_t threads = tuning.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
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
