#include "webhooks/periodic_task.h"

#include <algorithm>
#include <exception>

#include "webhooks/log.h"

namespace webhooks {
namespace {

// The longest wait: longer ones would overflow steady_clock's time point arithmetic.
constexpr std::chrono::milliseconds kLongestWait = std::chrono::hours(24 * 365);

std::chrono::milliseconds bounded(std::chrono::milliseconds wait) {
  return std::clamp(wait, std::chrono::milliseconds(0), kLongestWait);
}

}  // namespace

PeriodicTask::PeriodicTask(std::string failure_event, Step step, PeriodicTaskOptions options)
    : failure_event_(std::move(failure_event)), step_(std::move(step)), options_(options) {}

PeriodicTask::~PeriodicTask() { stop(); }

void PeriodicTask::start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  woken_ = false;
  thread_ = std::thread([this] { run(); });
}

void PeriodicTask::stop() {
  std::thread thread;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    thread = std::move(thread_);
  }
  changed_.notify_all();
  if (thread.joinable()) thread.join();
}

void PeriodicTask::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  changed_.notify_all();
}

bool PeriodicTask::pause(std::chrono::milliseconds delay) {
  std::unique_lock lock(mutex_);
  if (delay.count() > 0) changed_.wait_for(lock, bounded(delay), [this] { return stopping_; });
  return !stopping_;
}

void PeriodicTask::run() {
  std::chrono::milliseconds wait = bounded(options_.first_wait);
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait_for(lock, wait, [this] { return stopping_ || woken_; });
    if (stopping_) return;
    woken_ = false;
    lock.unlock();
    try {
      wait = bounded(step_());
    } catch (const std::exception& e) {
      log_event(spdlog::level::err, {{"event", failure_event_}, {"error", e.what()}});
      if (options_.after_failure.count() > 0) wait = bounded(options_.after_failure);
    }
    lock.lock();
  }
}

}  // namespace webhooks
