// Raw HTTP/1.1 exchanges on 127.0.0.1 for tests of how servers treat request framing, where an
// HTTP client library would hide it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

namespace webhooks::test {

// A new connection to 127.0.0.1:port on which `request` has been sent, with 5-second receives.
inline int raw_send(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size()));
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

// Reads from `fd` until `answer` holds one whole answer (its head and the body length it
// announces) or the connection ends.
inline void read_answer(int fd, std::string& answer) {
  char buffer[64 * 1024];
  while (true) {
    const std::size_t head_end = answer.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const std::size_t at = answer.substr(0, head_end).find("Content-Length: ");
      const std::size_t length =
          at == std::string::npos ? 0 : std::stoul(answer.substr(at + 16, 20));
      if (answer.size() >= head_end + 4 + length) return;
    }
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
}

// Sends `request` on a new connection and returns what the server answers within 5 seconds, up
// to the first blank line and the body length it announces (one answer).
inline std::string raw_exchange(int port, const std::string& request) {
  const int fd = raw_send(port, request);
  std::string answer;
  read_answer(fd, answer);
  ::close(fd);
  return answer;
}

// Sends `request`, reads its answer, sends `then` on the same connection (as a client that
// ignores "Connection: close" would), and returns everything the server answers until it closes
// the connection, and whether it closed it (false: a 5-second receive timed out first).
// (cpp-httplib 0.11 writes no answer to a client that has half-closed, so this one never does.)
struct RawTranscript {
  std::string answers;
  bool closed = false;
};
inline RawTranscript raw_exchange_until_close(int port, const std::string& request,
                                              const std::string& then = {}) {
  const int fd = raw_send(port, request);
  RawTranscript transcript;
  read_answer(fd, transcript.answers);
  if (!then.empty()) ::send(fd, then.data(), then.size(), MSG_NOSIGNAL);  // may meet a reset
  char buffer[4096];
  while (true) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) {
      transcript.closed = n == 0;
      break;
    }
    transcript.answers.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return transcript;
}

// The head of a POST whose body is sent chunked: the headers and the first chunk's size line
// (64 MiB), never the chunk itself. A server that refuses chunked bodies answers from the
// headers; with the chunk unsent it has nothing else to parse, so the connection is not reset
// under its answer. Returns raw_exchange's answer.
inline std::string post_chunked_head(
    int port, const std::string& path,
    const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  std::string request = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  request += "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n4000000\r\n";
  return raw_exchange(port, request);
}

// The JSON body of a raw answer (after the blank line).
inline std::string body_of(const std::string& answer) {
  const std::size_t at = answer.find("\r\n\r\n");
  return at == std::string::npos ? std::string() : answer.substr(at + 4);
}

}  // namespace webhooks::test
