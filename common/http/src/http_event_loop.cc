// webhooks::http::Server: connections read on one epoll thread, complete requests served by a
// pool of workers through cpp-httplib's own request processing (detail/event_loop.h).
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

namespace webhooks::http {
namespace detail {
namespace {

using namespace std::chrono;

// Read at most this much per readiness event, so one fast sender does not starve the others.
constexpr std::size_t kReadPerEvent = 256 * 1024;
// After an answer, a worker waits this long for the next request on the same connection before
// it gives the connection back to the loop (only when no other request waits for a worker).
constexpr auto kNextRequestWait = microseconds(3000);
// Accepted connections waiting for room when every open one is with a worker.
constexpr std::size_t kPendingMax = 1024;
// Requests one worker serves on one connection before it lets others have a turn.
constexpr int kRoundsPerTurn = 16;
// Closing: after the last answer what the client still sends is discarded for this long or this
// many bytes (RFC 9112, section 9.6), so a client still sending reads the answer, not a reset.
constexpr auto kLingerTime = seconds(1);
constexpr std::size_t kLingerBytes = 8 * 1024 * 1024;

// A fiber's stack: 8 MiB as a thread's (AddressSanitizer's larger frames: 32 MiB), mapped
// without reserving swap and touched only as used. cpp-httplib matches routes with std::regex,
// which recurses once per character of the path: a regex route and an 8 KiB path (its longest
// request line) take about 4 MiB (512 KiB failed from about 1,000 characters).
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kFiberStack = 32 * 1024 * 1024;
#else
constexpr std::size_t kFiberStack = 8 * 1024 * 1024;
#endif
// New requests a fiber worker takes from the queue at a time (the rest are left to the others).
constexpr std::size_t kFiberBatch = 16;

void fill_address(int fd, bool peer, std::string& host, int& port) {
  sockaddr_storage addr{};
  socklen_t length = sizeof addr;
  auto* raw = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(fd, raw, &length) : ::getsockname(fd, raw, &length)) != 0) return;
  std::array<char, NI_MAXHOST> name{};
  if (::getnameinfo(raw, length, name.data(), name.size(), nullptr, 0, NI_NUMERICHOST) != 0) return;
  host = name.data();
  if (addr.ss_family == AF_INET) {
    port = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    port = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  }
}

}  // namespace

ServedConnection* served_connection() {
  return static_cast<ServedConnection*>(fibers::local(fibers::Slot::served_connection));
}
void set_served_connection(ServedConnection* connection) {
  fibers::local(fibers::Slot::served_connection) = connection;
}

void Connection::reset_framing() {
  static_cast<RequestFraming&>(*this) = RequestFraming{};
  continue_sent = false;
  has_start = false;
}

EventLoop::EventLoop(Server& server, const ServerTuning& tuning)
    : server_(server),
      tuning_(tuning),
      max_connections_(std::max<std::size_t>(1, tuning.max_connections)),
      limits_{tuning.max_header_bytes, tuning.max_header_count, server.payload_limit()},
      idle_timeout_(duration_cast<milliseconds>(server.keep_alive_timeout())),
      keep_alive_max_(std::max<std::size_t>(1, server.keep_alive_max())) {}

EventLoop::~EventLoop() {
  for (const int fd : pending_) ::close(fd);
  for (auto& [fd, c] : connections_) {
    ::close(fd);
    delete c;
  }
  for (Connection* c : graveyard_) delete c;
  if (epoll_ >= 0) ::close(epoll_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void EventLoop::start() {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = nullptr;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_fd_, &event);
  loop_thread_ = std::thread([this] { run_loop(); });
  if (tuning_.fiber_threads > 0) {
    for (std::size_t i = 0; i < tuning_.fiber_threads; ++i) {
      workers_.emplace_back([this] { run_fiber_worker(); });
    }
  } else {
    for (std::size_t i = 0; i < std::max<std::size_t>(1, tuning_.threads); ++i) {
      workers_.emplace_back([this] { run_worker(); });
    }
  }
}

void EventLoop::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

void EventLoop::add(int fd) {
  {
    std::lock_guard lock(inbox_mutex_);
    accepted_.push_back(fd);
  }
  wake();
}

void EventLoop::stop(milliseconds drain, milliseconds answer_wait) {
  std::unique_lock lock(stop_mutex_);
  if (!stop_requested_) {
    stop_requested_ = true;
    stop_drain_ = drain;
    stop_answer_wait_ = answer_wait;
    stopping_.store(true);
    wake();
  }
  stop_done_.wait(lock, [this] { return stopped_; });
}

void EventLoop::shutdown() {
  stop(milliseconds(0), hours(24 * 365));
  {
    std::lock_guard lock(work_mutex_);
    workers_done_ = true;
  }
  work_ready_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  exit_.store(true);
  wake();
  if (loop_thread_.joinable()) loop_thread_.join();
}

// ---- the loop thread ----

void EventLoop::run_loop() {
  std::array<epoll_event, 256> events{};
  while (true) {
    auto now = LoopClock::now();
    auto next = now + seconds(1);
    for (const auto* timers : {&idle_, &reading_, &lingering_, &writing_}) {
      if (!timers->empty()) next = std::min(next, timers->begin()->first);
    }
    if (stop_begun_ && !stop_finished_) next = std::min({next, drain_until_, answers_until_});
    const auto wait = duration_cast<milliseconds>(next - now).count();
    const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()),
                               static_cast<int>(std::clamp<long long>(wait + 1, 0, 1000)));
    for (int i = 0; i < n; ++i) {
      if (events[static_cast<std::size_t>(i)].data.ptr == nullptr) {
        std::uint64_t count = 0;
        [[maybe_unused]] const ssize_t r = ::read(wake_fd_, &count, sizeof count);
        continue;
      }
      auto& c = *static_cast<Connection*>(events[static_cast<std::size_t>(i)].data.ptr);
      if (c.write_wakeup) {
        end_write_wait(c, false);
      } else {
        on_readable(c);
      }
    }
    std::vector<int> accepted;
    std::vector<Connection*> returned, write_waits;
    {
      std::lock_guard lock(inbox_mutex_);
      accepted.swap(accepted_);
      returned.swap(returned_);
      write_waits.swap(write_waits_);
    }
    for (Connection* c : write_waits) start_write_wait(*c);
    for (Connection* c : returned) take_back(*c);
    while (!pending_.empty() && (connections_.size() < max_connections_ || evict_one())) {
      const int fd = pending_.front();
      pending_.pop_front();
      accept_new(fd);
    }
    for (const int fd : accepted) accept_new(fd);
    now = LoopClock::now();
    if (!stop_begun_) {
      std::lock_guard lock(stop_mutex_);
      if (stop_requested_) {
        stop_begun_ = true;
        drain_until_ = now + stop_drain_;
        answers_until_ = now + stop_answer_wait_;
      }
    }
    expire(now);
    finish_stop_if_due(now);
    if (stop_begun_) {
      for (const int fd : pending_) ::close(fd);
      pending_.clear();
    }
    idle_count_.store(idle_.size());
    for (Connection* c : graveyard_) delete c;
    graveyard_.clear();
    if (exit_.load() && stop_finished_) {
      std::vector<Connection*> rest;
      for (auto& [fd, c] : connections_) rest.push_back(c);
      for (Connection* c : rest) {
        if (c->phase != Connection::Phase::queued && c->phase != Connection::Phase::busy) {
          close_now(*c);
        }
      }
      for (Connection* c : graveyard_) delete c;
      graveyard_.clear();
      if (connections_.empty()) break;
    }
  }
}

void EventLoop::accept_new(int fd) {
  if (connections_.size() >= max_connections_ && !evict_one()) {
    // Every connection is with a worker: wait for one to come back (bounded), or close.
    if (pending_.size() < kPendingMax && !stopping_.load()) {
      pending_.push_back(fd);
    } else {
      ::close(fd);
    }
    return;
  }
  const int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  auto* c = new Connection;
  c->fd = fd;
  fill_address(fd, true, c->remote_addr, c->remote_port);
  fill_address(fd, false, c->local_addr, c->local_port);
  connections_[fd] = c;
  open_.fetch_add(1);
  epoll_event event{};
  event.events = EPOLLIN | EPOLLONESHOT;
  event.data.ptr = c;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event) != 0) {
    close_now(*c);
    return;
  }
  c->phase = Connection::Phase::idle;
  set_timer(*c, LoopClock::now() + idle_timeout_);
}

bool EventLoop::evict_one() {
  // A connection lingering after its last answer goes first. Then, of the idle and the reading
  // ones, the one waiting the longest without a whole request: idle since its accept or its last
  // answer, or reading since its request's first byte. (Idle ones first, whatever their age, let
  // a burst of new clients at the cap close each other before the loop read them, while the
  // trickling connections holding the cap stayed: 4 of 5 new clients got no answer.)
  if (!lingering_.empty()) {
    close_now(*lingering_.begin()->second);
    return true;
  }
  Connection* idle = idle_.empty() ? nullptr : idle_.begin()->second;
  Connection* reading = reading_.empty() ? nullptr : reading_.begin()->second;
  if (idle && reading) {
    // Their timers are idle_timeout_ after becoming idle, request_timeout after the first byte.
    const auto idle_since = idle->deadline - idle_timeout_;
    const auto reading_since = reading->deadline - tuning_.request_timeout;
    close_now(reading_since < idle_since ? *reading : *idle);
    return true;
  }
  if (idle || reading) {
    close_now(idle ? *idle : *reading);
    return true;
  }
  return false;
}

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
  ::close(c.fd);  // also leaves the epoll set
  connections_.erase(c.fd);
  open_.fetch_sub(1);
  graveyard_.push_back(&c);
}

void EventLoop::start_linger(Connection& c) {
  ::shutdown(c.fd, SHUT_WR);
  c.in.clear();
  c.in.shrink_to_fit();
  c.discarded = 0;
  c.phase = Connection::Phase::lingering;
  set_timer(c, LoopClock::now() + kLingerTime);
  arm(c);
}

void EventLoop::refuse(Connection& c, int status, const char* code, const std::string& message) {
  send_now(c.fd, closing_answer(status, code, message, c.head_method));
  start_linger(c);
}

void EventLoop::on_readable(Connection& c) {
  std::array<char, 64 * 1024> chunk;
  std::size_t total = 0;
  while (total < kReadPerEvent) {
    const ssize_t n = ::recv(c.fd, chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
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
    refuse(c, r.status, r.code, r.message);
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

void EventLoop::expire(LoopClock::time_point now) {
  while (!writing_.empty() && writing_.begin()->first <= now) {
    end_write_wait(*writing_.begin()->second, true);
  }
  while (!idle_.empty() && idle_.begin()->first <= now) close_now(*idle_.begin()->second);
  while (!lingering_.empty() && lingering_.begin()->first <= now) {
    close_now(*lingering_.begin()->second);
  }
  while (!reading_.empty() && reading_.begin()->first <= now) {
    Connection& c = *reading_.begin()->second;
    if (c.phase == Connection::Phase::skipping) {
      close_now(c);
    } else {
      refuse(c, 408, "request_timeout",
             "the request was not received within " +
                 std::to_string(tuning_.request_timeout.count()) + " ms");
    }
  }
}

void EventLoop::finish_stop_if_due(LoopClock::time_point now) {
  if (!stop_begun_ || stop_finished_) return;
  const bool answers_done = in_workers_ == 0 || now >= answers_until_;
  bool open = false;  // a connection a request could still come on
  for (const auto& [fd, c] : connections_) {
    if (c->phase != Connection::Phase::lingering && c->phase != Connection::Phase::queued &&
        c->phase != Connection::Phase::busy) {
      open = true;
      break;
    }
  }
  const bool drained = !open || now >= drain_until_;
  if (!answers_done || !drained) return;
  std::vector<Connection*> rest;
  for (auto& [fd, c] : connections_) {
    if (c->phase == Connection::Phase::idle || c->phase == Connection::Phase::reading ||
        c->phase == Connection::Phase::skipping) {
      rest.push_back(c);
    }
  }
  for (Connection* c : rest) close_now(*c);
  stop_finished_ = true;
  {
    std::lock_guard lock(stop_mutex_);
    stopped_ = true;
  }
  stop_done_.notify_all();
}

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

// A fiber worker: each request is served on a fiber of this thread, so a handler waiting for a
// group commit lets the thread serve the others (detail/fiber.h). New requests are started first,
// then the fibers made ready meanwhile are resumed: a group's leader that yields (GroupCommit)
// finds the requests that came with it already queued behind it.
void EventLoop::run_fiber_worker() {
  fibers::Scheduler fibers(kFiberStack, work_mutex_, work_ready_);
  std::vector<Connection*> batch;
  while (true) {
    {
      std::unique_lock lock(work_mutex_);
      const auto has_work = [&] {
        return !work_.empty() || fibers.ready() || (workers_done_ && fibers.live() == 0);
      };
      work_ready_.wait(lock, has_work);
      if (work_.empty() && workers_done_ && fibers.live() == 0) return;
      while (!work_.empty() && batch.size() < kFiberBatch) {
        batch.push_back(work_.front());
        work_.pop_front();
        queued_.fetch_sub(1);
      }
    }
    for (Connection* c : batch) fibers.spawn([this, c] { serve(*c); });
    batch.clear();
    fibers.run();
  }
}

void EventLoop::give_back(Connection& c) {
  {
    std::lock_guard lock(inbox_mutex_);
    returned_.push_back(&c);
  }
  wake();
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
    bool ok = server_.serve(stream, last, closed);
    set_served_connection(nullptr);
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

}  // namespace detail

}  // namespace webhooks::http
