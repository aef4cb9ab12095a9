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
#include <optional>

#include "detail/buffered_stream.h"
#include "detail/canned_answers.h"
#include "detail/event_loop.h"
#include "detail/fiber.h"
#include "detail/log_batch.h"
#include "detail/served_connection.h"

namespace webhooks::http {
namespace detail {
namespace {

using namespace std::chrono;

// Accepted connections waiting for room when every open one is with a worker.
constexpr std::size_t kPendingMax = 1024;

// Request bytes held in the buffers of every webhooks::http::Server of the process.
std::atomic<std::uint64_t> buffered_bytes{0};
// A request that holds at most this much (a head, a small body) may use the whole budget; larger
// ones only 7/8 of it, so slow large bodies filling their share leave room for small requests.
constexpr std::uint64_t kSmallRequest = 64 * 1024;

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

FrameResult EventLoop::frame(Connection& c) {
  // RFC 9112, section 2.2: one empty line (CRLF) before a request line is ignored, as some clients
  // send one after a body.
  if (c.scanned == 0 && c.in.starts_with("\r\n")) c.in.erase(0, 2);
  FrameResult r = frame_request(c.in, limits_, c);
  if (r.kind == Framing::refuse) return r;
  // What the request will hold: all of it once framed (its body is still coming), else what is
  // there. A body over the limit is never buffered.
  std::uint64_t bytes = c.in.size();
  if (c.framed && !c.over_limit) bytes = std::max<std::uint64_t>(bytes, c.head_end + c.body);
  if (!hold(c, bytes)) {
    c.refusal = {Framing::refuse, 503, "server_busy",
                 "the server holds as many request bytes as it may; retry", "Retry-After: 1"};
    return c.refusal;
  }
  if (r.kind == Framing::need_more && c.framed) c.in.reserve(static_cast<std::size_t>(bytes));
  return r;
}

bool EventLoop::hold(Connection& c, std::uint64_t bytes) {
  if (bytes <= c.held) {
    buffered_bytes.fetch_sub(c.held - bytes);
    c.held = bytes;
    return true;
  }
  const std::uint64_t budget = tuning_.max_buffered_bytes;
  const std::uint64_t limit = bytes <= kSmallRequest ? budget : budget - budget / 8;
  const std::uint64_t more = bytes - c.held;
  std::uint64_t now = buffered_bytes.load();
  do {
    if (now + more > limit) return false;
  } while (!buffered_bytes.compare_exchange_weak(now, now + more));
  c.held = bytes;
  return true;
}

std::uint64_t buffered_request_bytes() { return buffered_bytes.load(); }

void Connection::reset_framing() {
  static_cast<RequestFraming&>(*this) = RequestFraming{};
  continue_sent = false;
  has_start = false;
}

EventLoop::EventLoop(Server& server, const ServerTuning& tuning, std::size_t max_connections)
    : server_(server),
      tuning_(tuning),
      max_connections_(std::max<std::size_t>(1, max_connections)),
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
  if (tuning_.fiber_threads > 0) return;  // the loop thread serves its requests itself
  for (std::size_t i = 0; i < std::max<std::size_t>(1, tuning_.threads); ++i) {
    workers_.emplace_back([this] { run_worker(); });
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
  std::optional<fibers::Scheduler> fibers;
  // The log lines of the requests served here go to the logger a batch at a time: one hand-over
  // to its writing thread, not one a line (detail/log_batch.h).
  std::optional<webhooks::detail::LogBatch> log_batch;
  if (tuning_.fiber_threads > 0) {
    fibers.emplace(kFiberStack, work_mutex_, work_ready_, [this] { wake(); });
    fibers_ = &*fibers;
    log_batch.emplace();
  }
  std::array<epoll_event, 256> events{};
  while (true) {
    const auto now = LoopClock::now();
    const bool busy = fibers_ && has_fiber_work();
    if (log_batch && !busy) log_batch->flush();  // about to wait: nothing is left waiting with it
    if (log_batch && busy) log_batch->flush_if_older(webhooks::detail::kLogBatchAge);
    const auto wait = busy ? -1 : duration_cast<milliseconds>(next_wakeup(now) - now).count();
    const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()),
                               static_cast<int>(std::clamp<long long>(wait + 1, 0, 1000)));
    for (int i = 0; i < n; ++i) on_event(events[static_cast<std::size_t>(i)].data.ptr);
    drain_inbox();
    if (fibers_) run_fibers();
    after_events(LoopClock::now());
    if (exit_.load() && stop_finished_ && close_all_idle() && (!fibers_ || fibers_->live() == 0)) {
      break;
    }
  }
  fibers_ = nullptr;
}

LoopClock::time_point EventLoop::next_wakeup(LoopClock::time_point now) const {
  auto next = now + seconds(1);
  for (const auto* timers : {&idle_, &reading_, &lingering_, &writing_}) {
    if (!timers->empty()) next = std::min(next, timers->begin()->first);
  }
  if (stop_begun_ && !stop_finished_) next = std::min({next, drain_until_, answers_until_});
  return next;
}

void EventLoop::on_event(void* data) {
  if (data == nullptr) {  // wake_fd_
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t r = ::read(wake_fd_, &count, sizeof count);
    return;
  }
  auto& c = *static_cast<Connection*>(data);
  if (c.write_wakeup) {
    end_write_wait(c, false);
  } else {
    on_readable(c);
  }
}

void EventLoop::drain_inbox() {
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
}

void EventLoop::after_events(LoopClock::time_point now) {
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
}

bool EventLoop::close_all_idle() {
  std::vector<Connection*> rest;
  for (auto& [fd, c] : connections_) rest.push_back(c);
  for (Connection* c : rest) {
    if (c->phase != Connection::Phase::queued && c->phase != Connection::Phase::busy) {
      close_now(*c);
    }
  }
  for (Connection* c : graveyard_) delete c;
  graveyard_.clear();
  return connections_.empty();
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
      refuse(c, {Framing::refuse, 408, "request_timeout",
                 "the request was not received within " +
                     std::to_string(tuning_.request_timeout.count()) + " ms",
                 ""});
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

}  // namespace detail

}  // namespace webhooks::http
