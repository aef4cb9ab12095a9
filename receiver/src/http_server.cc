#include "webhooks/receiver/http_server.h"

#include <sys/socket.h>

#include <atomic>
#include <memory>

#include "webhooks/error.h"

namespace webhooks::receiver {
namespace {

// The listening socket each tuned server last created, keyed by server.
struct ListeningSocket {
  std::atomic<int> fd{-1};
};

std::shared_ptr<ListeningSocket> install_socket_options(httplib::Server& server) {
  auto listening = std::make_shared<ListeningSocket>();
  server.set_socket_options([listening](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listening->fd.store(sock);
  });
  return listening;
}

void apply_tuning(httplib::Server& server, const ServerTuning& tuning) {
  server.set_tcp_nodelay(true);
  const std::size_t threads = tuning.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_keep_alive_max_count(tuning.keep_alive_max_count);
}

template <typename H>
void mount_any(httplib::Server& server, const std::string& route, Receiver& receiver, H handler) {
  server.Post(route, [&receiver, handler = std::move(handler)](const httplib::Request& req,
                                                                httplib::Response& res) {
    write_answer(receiver.handle(headers_of(req), req.body, handler), res);
  });
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
  if (bound <= 0 || listening->fd.load() < 0) {
    throw Error(ErrorCode::io, "cannot listen on " + host + ":" + std::to_string(port));
  }
  if (::listen(listening->fd.load(), tuning.backlog) != 0) {
    throw Error(ErrorCode::io, "listen(" + std::to_string(tuning.backlog) + ") failed");
  }
  return bound;
}

Headers headers_of(const httplib::Request& request) {
  Headers headers;
  for (const auto& [name, value] : request.headers) headers.add(name, value);
  return headers;
}

void write_answer(const Answer& answer, httplib::Response& response) {
  response.status = answer.status;
  for (const auto& [name, value] : answer.headers) response.set_header(name, value);
  response.set_content(answer.body, "application/json");
}

void mount(httplib::Server& server, const std::string& route, Receiver& receiver,
           Handler handler) {
  mount_any(server, route, receiver, std::move(handler));
}

void mount(httplib::Server& server, const std::string& route, Receiver& receiver,
           TransactionalHandler handler) {
  mount_any(server, route, receiver, std::move(handler));
}

}  // namespace webhooks::receiver
