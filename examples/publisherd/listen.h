// Listening the way DESIGN.md asks ("Known library traps"; "Interfaces that scripts rely on"),
// and stopping on SIGTERM/SIGINT.
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>
#include <thread>

namespace webhooks::publisherd {

struct ListenAddress {
  std::string host;
  int port = 0;
};
// "HOST:PORT" or "[IPv6]:PORT". Throws Error(invalid_argument).
ListenAddress parse_listen(std::string_view text);

// TCP_NODELAY, a pool of `threads`, a raised keep-alive count, SO_REUSEADDR, bind, backlog 4096,
// then `listening on HOST:PORT` as the first, flushed stdout line. Throws Error(io).
int bind_and_announce(httplib::Server& server, const ListenAddress& address, std::size_t threads);

// Ignores SIGPIPE and blocks SIGTERM/SIGINT in this thread (and the threads it starts later).
void block_stop_signals();

// Calls `on_stop` from its own thread when SIGTERM or SIGINT arrives.
class SignalWaiter {
 public:
  explicit SignalWaiter(std::function<void()> on_stop);
  ~SignalWaiter();
  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;

 private:
  std::thread thread_;
};

}  // namespace webhooks::publisherd
