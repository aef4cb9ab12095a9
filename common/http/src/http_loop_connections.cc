// The loop thread's side of a connection (detail/event_loop.h): reading until a request is whole,
// refusing, lingering, handing requests to the workers and taking connections back.
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

// Read at most this much per readiness event, so one fast sender does not starve the others.
constexpr std::size_t kReadPerEvent = 256 * 1024;

}  // namespace

void EventLoop::arm(Connection& c) {
  epoll_event event{};
  event.events = EPOLLIN | EPOLLONESHOT;
  event.data.ptr = &c;
  ::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &event);
}

void EventLoop::set_timer(Connection& c, LoopClock::time_point deadline) {
  clear_timer(c);
  auto* timers = c.phase == Connection::Phase::idle        ? &idle_
                 : c.phase == Connection::Phase::lingering ? &lingering_
                                                           : &reading_;
  c.timer = timers->emplace(deadline, &c);
  c.timer_map = timers;
  c.deadline = deadline;
}

void EventLoop::clear_timer(Connection& c) {
  if (c.timer_map) c.timer_map->erase(c.timer);
  c.timer_map = nullptr;
}

void EventLoop::close_now(Connection& c) {
  clear_timer(c);
  hold(c, 0);
  ::close(c.fd);  // also leaves the epoll set
  connections_.erase(c.fd);
  open_.fetch_sub(1);
  graveyard_.push_back(&c);
}

void EventLoop::start_linger(Connection& c) {
  ::shutdown(c.fd, SHUT_WR);
  c.in.clear();
  c.in.shrink_to_fit();
  hold(c, 0);
  c.discarded = 0;
  c.phase = Connection::Phase::lingering;
  set_timer(c, LoopClock::now() + kLingerTime);
  arm(c);
}

void EventLoop::refuse(Connection& c, const FrameResult& refusal) {
  send_now(c.fd, closing_answer(refusal.status, refusal.code, refusal.message, c.head_method,
                                refusal.header));
  start_linger(c);
}

void EventLoop::on_readable(Connection& c) {
  std::array<char, 64 * 1024> chunk;
  std::size_t total = 0;
  while (total < kReadPerEvent) {
    const ssize_t n = ::recv(c.fd, chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n == 0 && !c.in.empty() &&
        (c.phase == Connection::Phase::idle || c.phase == Connection::Phase::reading ||
         c.phase == Connection::Phase::busy)) {
      // The client shut down its side after sending (a half-close): what it sent is served
      // when it is a whole request, and the connection closed after the answers.
      c.peer_closed = true;
      break;
    }
    if (n <= 0) {  // end of stream or error: the client is gone
      close_now(c);
      return;
    }
    total += static_cast<std::size_t>(n);
    if (c.phase == Connection::Phase::lingering) {
      c.discarded += static_cast<std::size_t>(n);
      if (c.discarded >= kLingerBytes) {
        close_now(c);
        return;
      }
      continue;
    }
    std::size_t used = 0;
    if (c.phase == Connection::Phase::skipping) {
      used = static_cast<std::size_t>(std::min<std::uint64_t>(c.skip, static_cast<std::size_t>(n)));
      c.skip -= used;
    }
    c.in.append(chunk.data() + used, static_cast<std::size_t>(n) - used);
    if (c.phase != Connection::Phase::skipping && !c.has_start) {
      c.has_start = true;
      c.started = LoopClock::now();
    }
    // Enough for now once the request is whole (what follows stays in the kernel).
    if (c.head_end != 0 && c.framed && c.in.size() >= c.head_end + c.body) break;
    // A short read emptied the socket's buffer: another recv would only answer EAGAIN (a
    // keep-alive client sends its next request after this one's answer). Bytes that come
    // meanwhile wake the loop again, as the connection is re-armed level-triggered.
    if (static_cast<std::size_t>(n) < chunk.size()) break;
  }
  if (c.phase == Connection::Phase::lingering || c.skip > 0) {
    arm(c);
    return;
  }
  if (c.phase == Connection::Phase::skipping) {  // the refused body is gone: a new request
    c.has_start = false;
    c.phase = Connection::Phase::busy;
  }
  after_input(c);
}

void EventLoop::after_input(Connection& c) {
  if (c.in.empty()) {
    hold(c, 0);
    if (c.peer_closed) {
      close_now(c);
      return;
    }
    c.has_start = false;
    c.phase = Connection::Phase::idle;
    if (stop_finished_) {
      close_now(c);
      return;
    }
    set_timer(c, LoopClock::now() + idle_timeout_);
    arm(c);
    return;
  }
  if (!c.has_start) {
    c.has_start = true;
    c.started = LoopClock::now();
  }
  const FrameResult r = frame(c);
  if (r.kind == Framing::refuse) {
    refuse(c, r);
    return;
  }
  if (r.kind == Framing::ready) {
    if (stopping_.load()) {
      send_now(c.fd, stopping_answer(c.head_method));
      start_linger(c);
      return;
    }
    dispatch(c);
    return;
  }
  if (c.peer_closed) {  // closed before the request was whole: an abort, nothing to answer
    close_now(c);
    return;
  }
  if (c.head_end != 0 && c.expect_continue && !c.continue_sent && c.framed && c.body > 0) {
    send_now(c.fd, "HTTP/1.1 100 Continue\r\n\r\n");
    c.continue_sent = true;
  }
  if (c.phase != Connection::Phase::reading) {
    c.phase = Connection::Phase::reading;
    set_timer(c, c.started + tuning_.request_timeout);
  }
  arm(c);
}

void EventLoop::dispatch(Connection& c) {
  clear_timer(c);
  c.phase = Connection::Phase::queued;
  ++in_workers_;
  if (fibers_) {
    to_serve_.push_back(&c);
    return;
  }
  {
    std::lock_guard lock(work_mutex_);
    work_.push_back(&c);
    queued_.fetch_add(1);
  }
  work_ready_.notify_one();
}

void EventLoop::take_back(Connection& c) {
  --in_workers_;
  if (c.abandon) {
    close_now(c);
    return;
  }
  if (c.close_after) {
    start_linger(c);
    return;
  }
  if (c.skip > 0) {
    c.phase = Connection::Phase::skipping;
    set_timer(c, c.started + tuning_.request_timeout);
    arm(c);
    return;
  }
  c.phase = Connection::Phase::busy;  // after_input makes it idle or reading
  clear_timer(c);
  after_input(c);
}

void EventLoop::start_write_wait(Connection& c) {
  c.timer = writing_.emplace(c.write_deadline, &c);
  c.timer_map = &writing_;
  epoll_event event{};
  event.events = EPOLLOUT | EPOLLONESHOT;
  event.data.ptr = &c;
  if (::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &event) != 0) end_write_wait(c, true);
}

void EventLoop::end_write_wait(Connection& c, bool timed_out) {
  clear_timer(c);
  if (timed_out) {  // still armed for EPOLLOUT: disarmed, so no event comes for it later
    epoll_event event{};
    event.data.ptr = &c;
    ::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &event);
  }
  c.write_timed_out = timed_out;
  fibers::Wakeup* wakeup = c.write_wakeup;
  c.write_wakeup = nullptr;
  wakeup->notify();  // the worker owns `c` again
}

bool EventLoop::wait_writable(Connection& c, LoopClock::time_point deadline) {
  fibers::Wakeup wakeup;
  c.write_wakeup = &wakeup;
  c.write_deadline = deadline;
  c.write_timed_out = false;
  {
    std::lock_guard lock(inbox_mutex_);
    write_waits_.push_back(&c);
  }
  wake();
  wakeup.wait();
  return !c.write_timed_out;
}

}  // namespace webhooks::http::detail
