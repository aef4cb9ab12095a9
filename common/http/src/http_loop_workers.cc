// Serving the requests of webhooks::http::Server's event loop (detail/event_loop.h) through
// cpp-httplib's request processing: on worker threads, or on fibers of the loop thread.
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "detail/buffered_stream.h"
#include "detail/canned_answers.h"
#include "detail/event_loop.h"
#include "detail/fiber.h"
#include "detail/served_connection.h"

namespace webhooks::http::detail {
namespace {

using namespace std::chrono;

// After an answer, a worker waits this long for the next request on the same connection before
// it gives the connection back to the loop (only when no other request waits for a worker).
constexpr auto kNextRequestWait = microseconds(3000);
// Requests one worker serves on one connection before it lets others have a turn.
constexpr int kRoundsPerTurn = 16;

}  // namespace

// ---- workers ----

void EventLoop::run_worker() {
  while (true) {
    Connection* c = nullptr;
    {
      std::unique_lock lock(work_mutex_);
      work_ready_.wait(lock, [this] { return !work_.empty() || workers_done_; });
      if (work_.empty()) return;
      c = work_.front();
      work_.pop_front();
      queued_.fetch_sub(1);
    }
    serve(*c);
  }
}

// With fibers: each request dispatched since the last turn is served on a fiber of the loop
// thread (detail/fiber.h), which runs until it ends or waits (a group commit, a slow client);
// then the fibers made ready meanwhile are resumed. The requests of one turn start before any
// waiting fiber resumes, so a group's leader that yields (GroupCommit) finds the requests that
// came with it already queued behind it.
void EventLoop::run_fibers() {
  std::vector<Connection*> batch;
  batch.swap(to_serve_);
  for (Connection* c : batch) fibers_->spawn([this, c] { serve(*c); });
  fibers_->run();
}

bool EventLoop::has_fiber_work() {
  if (!to_serve_.empty()) return true;
  {
    std::lock_guard lock(work_mutex_);
    if (fibers_->ready()) return true;
  }
  std::lock_guard lock(inbox_mutex_);
  return !returned_.empty() || !write_waits_.empty() || !accepted_.empty();
}

void EventLoop::give_back(Connection& c) {
  {
    std::lock_guard lock(inbox_mutex_);
    returned_.push_back(&c);
  }
  if (!fiber_loop()) wake();  // a fiber runs on the loop thread, which looks before it sleeps
}

void EventLoop::answer_stopping(Connection& c) {
  BufferedStream stream(c, LoopClock::now() + tuning_.request_timeout, fiber_loop());
  const std::string answer = stopping_answer(c.head_method);
  stream.write(answer.data(), answer.size());
  stream.flush();
  c.close_after = true;
}

bool EventLoop::read_more(Connection& c) {
  std::array<char, 64 * 1024> chunk;
  bool waited = false;
  while (true) {
    const ssize_t n = ::recv(c.fd, chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n > 0) {
      c.in.append(chunk.data(), static_cast<std::size_t>(n));
      if (!c.has_start) {
        c.has_start = true;
        c.started = LoopClock::now();
      }
      const FrameResult r = frame(c);
      if (r.kind == Framing::ready) return true;
      if (r.kind == Framing::refuse) return false;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) c.peer_closed = true;  // the loop serves what is whole, then closes
    // A thread worker waits a little for the client's next request (cheaper than the hand-over
    // to the loop and back); a fiber worker has other requests to serve meanwhile.
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !waited && c.in.empty() &&
        queued_.load() == 0 && tuning_.fiber_threads == 0) {
      waited = true;
      pollfd readable{c.fd, POLLIN, 0};
      const timespec wait{0, duration_cast<nanoseconds>(kNextRequestWait).count()};
      if (::ppoll(&readable, 1, &wait, nullptr) > 0) continue;
    }
    return false;  // nothing yet, end of stream or an error: the loop takes it from here
  }
}

void EventLoop::serve(Connection& c) {
  // c.phase stays `queued` (the loop reads it while stopping): queued and busy are one to it.
  for (int round = 0;; ++round) {
    if (stopping_.load()) {
      answer_stopping(c);
      break;
    }
    BufferedStream stream(c, LoopClock::now() + tuning_.request_timeout, fiber_loop());
    const bool last = ++c.served >= keep_alive_max_;
    bool closed = false;
    set_served_connection(&stream);
    // cpp-httplib 0.11 percent-decodes header values: the raw head lets Server restore them.
    const std::string_view raw_head =
        c.percent ? std::string_view(c.in).substr(0, c.head_end) : std::string_view();
    bool ok = server_.serve(stream, raw_head, last, closed);
    set_served_connection(nullptr);
    // The request's bytes leave the buffer budget before its answer goes out, so a client that has
    // its answer finds them released.
    const std::uint64_t request_bytes = c.framed && !c.over_limit
                                            ? c.head_end + c.body
                                            : static_cast<std::uint64_t>(stream.consumed());
    hold(c, c.in.size() > request_bytes ? c.in.size() - request_bytes : 0);
    ok = stream.flush() && ok;
    if (stream.abandoned()) {
      c.abandon = true;
      break;
    }
    // A stop that began meanwhile does not close the connection: its answer did not say so, and
    // the loop answers what comes on it next 503 while it drains.
    if (!ok || closed || last || stream.close_requested() || (stream.starved() && !c.over_limit)) {
      c.close_after = true;
      break;
    }
    std::size_t end = stream.consumed();
    if (c.framed) {
      const std::uint64_t expected = c.head_end + c.body;
      if (end > expected) {  // httplib read past the framed request: its state is unknown
        c.close_after = true;
        break;
      }
      if (expected <= c.in.size()) {
        end = static_cast<std::size_t>(expected);  // an unread body (e.g. after a 416) is dropped
      } else {
        c.skip = expected - c.in.size();  // the rest of a 413's body, still to come
        end = c.in.size();
      }
    }
    c.in.erase(0, end);
    const auto started = c.started;
    c.reset_framing();
    hold(c, c.in.size());
    if (c.skip > 0) {
      c.started = started;  // the discarding is bounded by the refused request's deadline
      break;
    }
    if (c.in.capacity() > 256 * 1024 && c.in.size() < 64 * 1024) c.in.shrink_to_fit();
    if (round + 1 >= kRoundsPerTurn) break;
    if (!c.in.empty()) {
      c.has_start = true;
      c.started = LoopClock::now();
      const FrameResult r = frame(c);
      if (r.kind == Framing::ready) continue;
      if (r.kind == Framing::refuse) break;
    }
    if (!read_more(c)) break;
  }
  give_back(c);
}

}  // namespace webhooks::http::detail
