// The loops one webhooks::http::Server runs (detail/event_loop.h): one per fiber thread, so that a
// request is read, served and answered on one thread, or one loop with its worker threads.
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "detail/event_loop.h"

namespace webhooks::http::detail {

EventLoops::EventLoops(Server& server, const ServerTuning& tuning) {
  const std::size_t count = std::max<std::size_t>(1, tuning.fiber_threads);
  // max_connections is the server's: each loop holds its share (rounded up).
  const std::size_t share = (std::max<std::size_t>(1, tuning.max_connections) + count - 1) / count;
  for (std::size_t i = 0; i < count; ++i) {
    loops_.push_back(std::make_shared<EventLoop>(server, tuning, share));
  }
}

void EventLoops::start() {
  for (const auto& loop : loops_) loop->start();
}

void EventLoops::add(int fd) { loops_[next_.fetch_add(1) % loops_.size()]->add(fd); }

void EventLoops::stop(std::chrono::milliseconds drain, std::chrono::milliseconds answer_wait) {
  std::vector<std::thread> stopping;
  for (std::size_t i = 1; i < loops_.size(); ++i) {
    stopping.emplace_back([&, i] { loops_[i]->stop(drain, answer_wait); });
  }
  loops_[0]->stop(drain, answer_wait);
  for (auto& t : stopping) t.join();
}

void EventLoops::shutdown() {
  stop(std::chrono::milliseconds(0), std::chrono::hours(24 * 365));
  for (const auto& loop : loops_) loop->shutdown();
}

std::size_t EventLoops::open_connections() const {
  std::size_t open = 0;
  for (const auto& loop : loops_) open += loop->open_connections();
  return open;
}

std::size_t EventLoops::idle_connections() const {
  std::size_t idle = 0;
  for (const auto& loop : loops_) idle += loop->idle_connections();
  return idle;
}

bool EventLoops::stopping() const {
  return std::all_of(loops_.begin(), loops_.end(),
                     [](const auto& loop) { return loop->stopping(); });
}

}  // namespace webhooks::http::detail
