// Whether a server on 127.0.0.1 still accepts connections, for tests of how servers stop.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <thread>

namespace webhooks::test {

// Connects to `port` until a connection is refused (at most 1,000,000 tries); whether it was
// still listening at the last try.
inline bool listening_until_closed(int port) {
  bool listening = true;
  for (int attempt = 0; listening && attempt < 1000000; ++attempt) {
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    listening = ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(probe);
    std::this_thread::yield();
  }
  return listening;
}

}  // namespace webhooks::test
