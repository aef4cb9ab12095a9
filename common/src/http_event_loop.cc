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
#include <cstring>

#include "detail/event_loop.h"
#include "detail/served_connection.h"
#include "webhooks/idempotency/guard.h"

namespace webhooks::http {
namespace detail {
namespace {

using namespace std::chrono;

// cpp-httplib's CPPHTTPLIB_REQUEST_URI_MAX_LENGTH: a longer request line is answered 414.
constexpr std::size_t kRequestLineMax = 8192;
// CPPHTTPLIB_HEADER_MAX_LENGTH: a longer header line is answered 400.
constexpr std::size_t kHeaderLineMax = 8192;
// The most of a body the loop buffers, whatever the payload limit (a server without
// limit_request_bodies has none): a longer body is handed over unread.
constexpr std::uint64_t kBufferedBodyMax = 64ull * 1024 * 1024;
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

thread_local ServedConnection* current_connection = nullptr;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

// Whether cpp-httplib can parse this request line (with its CRLF): a known method, a target, and
// HTTP/1.0 or HTTP/1.1. Those it cannot it answers 400 at once, without reading further.
bool request_line_parses(std::string_view line) {
  static constexpr std::string_view kMethods[] = {"GET",     "HEAD",    "POST",  "PUT",
                                                  "DELETE",  "CONNECT", "OPTIONS", "TRACE",
                                                  "PATCH",   "PRI"};
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return false;
  const std::string_view method = line.substr(0, space);
  if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods)) {
    return false;
  }
  return line.ends_with(" HTTP/1.1\r\n") || line.ends_with(" HTTP/1.0\r\n");
}

bool decimal(const std::string& text) {
  return !text.empty() && text.size() <= 19 &&
         text.find_first_not_of("0123456789") == std::string::npos;
}

const char* reason(int status) {
  switch (status) {
    case 408: return "Request Timeout";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

// A whole answer that ends the connection, with a JSON error body (none after a HEAD).
std::string closing_answer(int status, std::string_view code, const std::string& message,
                           bool head, bool retry_after = false) {
  const std::string body = idempotency::error_body(code, message);
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) +
                    "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nContent-Type: application/json\r\n";
  if (retry_after) out += "Retry-After: 1\r\n";
  out += "\r\n";
  if (!head) out += body;
  return out;
}

std::string stopping_answer(bool head) {
  return closing_answer(503, "server_stopping", "the server is stopping; retry", head, true);
}

// Sends what fits now; a closing answer is small, and a client that does not read it loses it.
void send_now(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return;
    }
  }
}

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

// httplib's view of one buffered request: reads come from the connection's buffer and never
// block (past its end: end of stream, which ends the connection after the answer); writes are
// collected and sent when the answer is complete or 64 KiB are pending.
class BufferedStream final : public httplib::Stream, public ServedConnection {
 public:
  BufferedStream(Connection& c, LoopClock::time_point deadline)
      : c_(c), deadline_(deadline), swallow_continue_(c.continue_sent) {}

  bool is_readable() const override { return pos_ < c_.in.size(); }
  bool is_writable() const override { return !failed_ && !abandoned_; }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ >= c_.in.size()) {
      starved_ = true;
      return 0;
    }
    const std::size_t n = std::min(size, c_.in.size() - pos_);
    std::memcpy(ptr, c_.in.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
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

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.remote_addr;
    port = c_.remote_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.local_addr;
    port = c_.local_port;
  }
  socket_t socket() const override { return c_.fd; }

  // ServedConnection
  int fd() const override { return c_.fd; }
  bool joins(const std::string& local_addr, int local_port, const std::string& remote_addr,
             int remote_port) const override {
    return local_port == c_.local_port && remote_port == c_.remote_port &&
           local_addr == c_.local_addr && remote_addr == c_.remote_addr;
  }
  void close_after_answer() override { close_requested_ = true; }
  void abandon() override {
    abandoned_ = true;
    out_.clear();
  }

  // Sends what is pending, waiting for the socket up to the deadline. False once it failed.
  bool flush() {
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
        const auto left = duration_cast<milliseconds>(deadline_ - LoopClock::now()).count();
        pollfd writable{c_.fd, POLLOUT, 0};
        if (left <= 0 || ::poll(&writable, 1, static_cast<int>(left)) <= 0) failed_ = true;
      } else {
        failed_ = true;
      }
    }
    out_.clear();
    return !failed_;
  }

  std::size_t consumed() const { return pos_; }
  bool starved() const { return starved_; }
  bool abandoned() const { return abandoned_; }
  bool close_requested() const { return close_requested_; }

 private:
  Connection& c_;
  LoopClock::time_point deadline_;
  std::string out_;
  std::size_t pos_ = 0;
  bool swallow_continue_ = false;
  bool starved_ = false;
  bool failed_ = false;
  bool abandoned_ = false;
  bool close_requested_ = false;
};

}  // namespace

ServedConnection* served_connection() { return current_connection; }
void set_served_connection(ServedConnection* connection) { current_connection = connection; }

void Connection::reset_framing() {
  scanned = line_begin = lines = head_end = length_headers = 0;
  length_value.clear();
  chunked = expect_continue = continue_sent = head_method = body_method = framed = over_limit =
      false;
  body = 0;
  has_start = false;
}

EventLoop::EventLoop(Server& server, const ServerTuning& tuning)
    : server_(server),
      tuning_(tuning),
      max_connections_(std::max<std::size_t>(1, tuning.max_connections)),
      payload_limit_(server.payload_limit()),
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
  std::array<epoll_event, 256> events{};
  while (true) {
    auto now = LoopClock::now();
    auto next = now + seconds(1);
    for (const auto* timers : {&idle_, &reading_, &lingering_}) {
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
      on_readable(*static_cast<Connection*>(events[static_cast<std::size_t>(i)].data.ptr));
    }
    std::vector<int> accepted;
    std::vector<Connection*> returned;
    {
      std::lock_guard lock(inbox_mutex_);
      accepted.swap(accepted_);
      returned.swap(returned_);
    }
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

void EventLoop::expire(LoopClock::time_point now) {
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

// ---- framing (the loop, or the worker that holds the connection) ----

FrameResult EventLoop::frame(Connection& c) const {
  const auto ready = [] { return FrameResult{Framing::ready, 0, "", {}}; };
  const std::string& in = c.in;
  const auto too_large = [&](std::string message) {
    return FrameResult{Framing::refuse, 431, "headers_too_large", std::move(message)};
  };
  const auto head_too_large = [&] {
    return too_large("the request head is larger than " +
                     std::to_string(tuning_.max_header_bytes) + " bytes");
  };
  if (c.head_end == 0) {
    while (true) {
      const std::size_t nl = in.find('\n', c.scanned);
      if (nl == std::string::npos) {
        c.scanned = in.size();
        // A request line httplib will answer 414 (it reads the rest of the head itself).
        if (c.lines == 0 && in.size() > kRequestLineMax) return ready();
        if (in.size() > tuning_.max_header_bytes) return head_too_large();
        return {};
      }
      const std::size_t begin = c.line_begin;
      if (c.lines == 0) {
        // httplib answers these itself, 400 and 414, without reading further.
        if (nl == 0 || in[nl - 1] != '\r' || nl + 1 - begin > kRequestLineMax) {
          return ready();
        }
        if (!request_line_parses(std::string_view(in.data() + begin, nl + 1 - begin))) {
          return ready();
        }
        c.head_method = in.compare(0, 5, "HEAD ") == 0;
        c.body_method = in.starts_with("POST ") || in.starts_with("PUT ") ||
                        in.starts_with("PATCH ") || in.starts_with("DELETE ") ||
                        in.starts_with("PRI ");
      } else if (nl == begin + 1 && in[begin] == '\r') {
        c.head_end = nl + 1;
        break;
      } else {
        if (nl + 1 - begin > kHeaderLineMax) return ready();  // httplib: 400
        if (c.lines > tuning_.max_header_count) {
          return too_large("the request has more than " +
                           std::to_string(tuning_.max_header_count) + " header fields");
        }
        const std::size_t colon = in.find(':', begin);
        if (colon != std::string::npos && colon < nl) {
          const std::string_view name(in.data() + begin, colon - begin);
          std::size_t v = colon + 1, e = nl;
          while (v < e && (in[v] == ' ' || in[v] == '\t')) ++v;
          while (e > v && (in[e - 1] == ' ' || in[e - 1] == '\t' || in[e - 1] == '\r')) --e;
          const std::string_view value(in.data() + v, e - v);
          if (iequals(name, "content-length")) {
            ++c.length_headers;
            c.length_value = std::string(value);
          } else if (iequals(name, "transfer-encoding")) {
            c.chunked = true;
          } else if (iequals(name, "expect") && value == "100-continue") {
            c.expect_continue = true;
          }
        }
      }
      ++c.lines;
      c.line_begin = c.scanned = nl + 1;
      if (c.scanned > tuning_.max_header_bytes) return head_too_large();
    }
  }
  if (c.head_end > tuning_.max_header_bytes) return head_too_large();
  if (c.chunked || c.length_headers > 1 || (c.length_headers == 1 && !decimal(c.length_value))) {
    return ready();  // limit_request_bodies refuses it and closes (411, 400)
  }
  c.framed = true;
  c.body = c.length_headers == 1 ? std::stoull(c.length_value) : 0;
  // A body httplib does not read (a GET's: limit_request_bodies refuses it and closes), or one
  // over the limit, is not waited for.
  if ((c.body > 0 && !c.body_method) ||
      c.body > std::min<std::uint64_t>(payload_limit_, kBufferedBodyMax)) {
    c.over_limit = true;  // httplib answers 413 unread; the body is then discarded
    return ready();
  }
  if (in.size() >= c.head_end + c.body) return ready();
  return {};
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

void EventLoop::give_back(Connection& c) {
  {
    std::lock_guard lock(inbox_mutex_);
    returned_.push_back(&c);
  }
  wake();
}

void EventLoop::answer_stopping(Connection& c) {
  BufferedStream stream(c, LoopClock::now() + tuning_.request_timeout);
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
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !waited && c.in.empty() &&
        queued_.load() == 0) {
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
    BufferedStream stream(c, LoopClock::now() + tuning_.request_timeout);
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
