// cpp-httplib's stream over a buffered request (detail/buffered_stream.h).
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "detail/buffered_stream.h"

namespace webhooks::http::detail {

ssize_t BufferedStream::read(char* ptr, size_t size) {
  if (pos_ >= c_.in.size()) {
    starved_ = true;
    return 0;
  }
  const std::size_t n = std::min(size, c_.in.size() - pos_);
  std::memcpy(ptr, c_.in.data() + pos_, n);
  pos_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t BufferedStream::write(const char* ptr, size_t size) {
  if (failed_ || abandoned_) return -1;
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  if (swallow_continue_ && std::string_view(ptr, size) == kContinue) {
    swallow_continue_ = false;  // the loop sent it already, before the body came
    return static_cast<ssize_t>(size);
  }
  out_.append(ptr, size);
  if (out_.size() >= 64 * 1024 && !flush()) return -1;
  return static_cast<ssize_t>(size);
}

bool BufferedStream::flush() {
  using namespace std::chrono;
  if (abandoned_) return false;
  std::size_t sent = 0;
  while (!failed_ && sent < out_.size()) {
    const ssize_t n =
        ::send(c_.fd, out_.data() + sent, out_.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // A client slow to read: the loop serves the others meanwhile. A fiber that may not
      // suspend (in a transaction) waits here, as a thread does: the loop is its own thread.
      if (fiber_loop_ && fibers::can_suspend()) {
        if (!fiber_loop_->wait_writable(c_, deadline_)) failed_ = true;
        continue;
      }
      const auto left = duration_cast<milliseconds>(deadline_ - LoopClock::now()).count();
      pollfd writable{c_.fd, POLLOUT, 0};
      if (left <= 0 || ::poll(&writable, 1, static_cast<int>(left)) <= 0) failed_ = true;
    } else {
      failed_ = true;
    }
  }
  out_.clear();
  // After a large answer, as Connection::in after a large request.
  if (out_.capacity() > 256 * 1024) out_.shrink_to_fit();
  return !failed_;
}

}  // namespace webhooks::http::detail
