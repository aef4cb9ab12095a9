// The event loops under webhooks::http::Server (webhooks/http_server.h). Each loop reads its
// connections on one thread (epoll) until a request is whole, then serves it through httplib's
// request processing: on a fiber of that same thread (ServerTuning::fiber_threads, one loop per
// fiber thread), or on a pool of worker threads (one loop). Internal to common/http/src (the loop:
// http_event_loop.cc; its connections: http_loop_connections.cc; serving: http_loop_workers.cc;
// the set of loops a server runs: http_event_loops.cc; request framing: detail/request_framing.h;
// the stream httplib writes to: detail/buffered_stream.h; the answers the loop writes itself:
// detail/canned_answers.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "detail/fiber.h"
#include "detail/request_framing.h"
#include "webhooks/http_server.h"

namespace webhooks::http::detail {

using LoopClock = std::chrono::steady_clock;

// A fiber's stack: 8 MiB as a thread's (AddressSanitizer's larger frames: 32 MiB), mapped
// without reserving swap and touched only as used. cpp-httplib matches routes with std::regex,
// which recurses once per character of the path: a regex route and an 8 KiB path (its longest
// request line) take about 4 MiB (512 KiB failed from about 1,000 characters).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr std::size_t kFiberStack = 32 * 1024 * 1024;
#else
inline constexpr std::size_t kFiberStack = 8 * 1024 * 1024;
#endif

// One client connection. Owned by the loop thread, or by one worker while it is queued or served
// (the hand-over through the queues orders the accesses). Its RequestFraming part is the framing of
// the request at the start of `in` (reset after each request).
struct Connection : RequestFraming {
  enum class Phase { idle, reading, skipping, queued, busy, lingering };

  int fd = -1;
  Phase phase = Phase::idle;
  std::string in;  // received, not yet consumed: the start of the next request(s)
  // The answer a worker is writing (BufferedStream), empty between answers; its capacity is kept
  // from one answer to the next, so writing an answer allocates nothing in the steady state.
  std::string out;
  std::string local_addr, remote_addr;
  int local_port = 0, remote_port = 0;
  std::size_t served = 0;  // requests answered on this connection

  bool continue_sent = false;  // the loop sent "100 Continue"
  bool peer_closed = false;    // the client shut down its side: serve what is whole, then close
  std::uint64_t held = 0;      // request bytes charged to the process's buffer budget
  LoopClock::time_point started{};  // the request's first byte
  bool has_start = false;

  std::uint64_t skip = 0;     // body bytes still to discard (after a 413)
  std::size_t discarded = 0;  // while lingering
  LoopClock::time_point deadline{};
  std::multimap<LoopClock::time_point, Connection*>::iterator timer;
  std::multimap<LoopClock::time_point, Connection*>* timer_map = nullptr;
  bool timed = false;
  bool close_after = false;  // set by the worker: linger, then close
  bool abandon = false;      // set by the worker: close at once
  // A fiber worker's answer waiting for room in the socket (EventLoop::wait_writable): woken by
  // the loop once the socket is writable or at write_deadline.
  fibers::Wakeup* write_wakeup = nullptr;
  LoopClock::time_point write_deadline{};
  bool write_timed_out = false;

  void reset_framing();
};

// Request bytes held now by the buffers of every webhooks::http::Server of the process (the
// budget of ServerTuning::max_buffered_bytes), for tests.
std::uint64_t buffered_request_bytes();

class EventLoop : public std::enable_shared_from_this<EventLoop> {
 public:
  // With tuning.fiber_threads > 0 the loop serves its requests on fibers of its own thread
  // (and holds at most max_connections of its own); else on tuning.threads worker threads.
  EventLoop(Server& server, const ServerTuning& tuning, std::size_t max_connections);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  void start();
  // A socket accepted by httplib's listening thread.
  void add(int fd);
  // Requests from now on get 503 server_stopping; connections stay open for `drain` (or until all
  // are closed) once the requests in handlers are answered, at most `answer_wait`; then the rest
  // are closed. Returns once that is done (handlers still running later close their connection
  // after their answer).
  void stop(std::chrono::milliseconds drain, std::chrono::milliseconds answer_wait);
  // stop(0, unbounded), then joins the workers and the loop thread.
  void shutdown();
  std::size_t open_connections() const { return open_.load(); }
  std::size_t idle_connections() const { return idle_count_.load(); }
  bool stopping() const { return stopping_.load(); }
  // On a fiber worker serving `c`: suspends the fiber until the socket has room for more of the
  // answer (true) or `deadline` passes (false); the loop thread watches the socket meanwhile.
  bool wait_writable(Connection& c, LoopClock::time_point deadline);

 private:
  void run_loop();
  // Parts of one turn of run_loop: the earliest timer (at most 1 s away); one epoll event (a
  // connection, or nullptr for the wake eventfd); what workers and the acceptor handed over;
  // stop, timers and freeing; at exit, closing every connection not with a worker (true once
  // none is left).
  LoopClock::time_point next_wakeup(LoopClock::time_point now) const;
  void on_event(void* data);
  void drain_inbox();
  void after_events(LoopClock::time_point now);
  bool close_all_idle();
  void run_worker();
  // With fibers: serves the requests dispatched since the last turn, each on a new fiber, then
  // resumes the fibers made ready meanwhile (on the loop thread).
  void run_fibers();
  // With fibers: whether the loop has work without waiting (epoll_wait then does not sleep).
  bool has_fiber_work();
  void wake();
  void on_readable(Connection& c);
  void after_input(Connection& c);
  void accept_new(int fd);
  void take_back(Connection& c);
  void dispatch(Connection& c);
  void refuse(Connection& c, const FrameResult& refusal);
  void start_linger(Connection& c);
  void close_now(Connection& c);
  void arm(Connection& c);
  void set_timer(Connection& c, LoopClock::time_point deadline);
  void clear_timer(Connection& c);
  void expire(LoopClock::time_point now);
  bool evict_one();
  void finish_stop_if_due(LoopClock::time_point now);
  void start_write_wait(Connection& c);
  void end_write_wait(Connection& c, bool timed_out);

  // Worker side.
  void serve(Connection& c);
  bool read_more(Connection& c);
  void give_back(Connection& c);
  void answer_stopping(Connection& c);

  // frame_request on c's buffer, then the buffer budget: a request that would take the process's
  // buffered request bytes past tuning.max_buffered_bytes is refused 503 server_busy.
  FrameResult frame(Connection& c);
  // Charges `c` with holding `bytes` of request bytes (more or fewer than before) against the
  // process-wide budget; false (nothing charged) when more would not fit.
  bool hold(Connection& c, std::uint64_t bytes);
  // This loop for a BufferedStream to wait on when its requests run on fibers, else nullptr.
  EventLoop* fiber_loop() { return tuning_.fiber_threads > 0 ? this : nullptr; }

  Server& server_;
  const ServerTuning tuning_;
  const std::size_t max_connections_;
  const FramingLimits limits_;
  const std::chrono::milliseconds idle_timeout_;
  const std::size_t keep_alive_max_;

  int epoll_ = -1;
  int wake_fd_ = -1;
  std::thread loop_thread_;
  std::vector<std::thread> workers_;

  std::mutex inbox_mutex_;
  std::vector<int> accepted_;
  std::vector<Connection*> returned_;
  std::vector<Connection*> write_waits_;  // wait_writable, for the loop to watch

  std::mutex work_mutex_;
  std::condition_variable work_ready_;
  std::deque<Connection*> work_;
  bool workers_done_ = false;
  std::atomic<std::size_t> queued_{0};

  // Loop thread only.
  fibers::Scheduler* fibers_ = nullptr;     // with fibers: run_loop's
  std::vector<Connection*> to_serve_;       // with fibers: dispatched, for run_fibers
  std::map<int, Connection*> connections_;  // by fd
  std::multimap<LoopClock::time_point, Connection*> idle_, reading_, lingering_, writing_;
  std::vector<Connection*> graveyard_;
  std::deque<int> pending_;     // accepted, waiting for room
  std::size_t in_workers_ = 0;  // queued or busy
  LoopClock::time_point drain_until_{}, answers_until_{};
  bool stop_begun_ = false;
  bool stop_finished_ = false;

  std::atomic<bool> stopping_{false};
  std::atomic<bool> exit_{false};
  std::atomic<std::size_t> open_{0};
  std::atomic<std::size_t> idle_count_{0};
  std::chrono::milliseconds stop_drain_{0}, stop_answer_wait_{0};
  std::mutex stop_mutex_;
  std::condition_variable stop_done_;
  bool stop_requested_ = false;
  bool stopped_ = false;  // every connection not in a handler closed
};

// The loops one webhooks::http::Server runs: one per fiber thread (ServerTuning::fiber_threads),
// each with its share of max_connections, accepted sockets dealt out in turn; or one loop with
// its pool of worker threads.
class EventLoops {
 public:
  EventLoops(Server& server, const ServerTuning& tuning);
  void start();
  // EventLoop's, for every loop: add() gives the socket to the next loop in turn; stop() stops
  // them all at once and returns when every one has stopped.
  void add(int fd);
  void stop(std::chrono::milliseconds drain, std::chrono::milliseconds answer_wait);
  void shutdown();
  std::size_t open_connections() const;
  std::size_t idle_connections() const;
  // Whether every loop refuses new requests.
  bool stopping() const;

 private:
  std::vector<std::shared_ptr<EventLoop>> loops_;
  std::atomic<std::size_t> next_{0};
};

}  // namespace webhooks::http::detail
