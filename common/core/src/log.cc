#include "webhooks/log.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/async.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include "detail/log_batch.h"

namespace webhooks {
namespace {

// The libraries' logger. `current` is what every logging call reads (one atomic load); the
// loggers it ever pointed to are kept in `installed` until exit, so a thread that loaded a pointer
// just before set_logger replaced it still writes through a live logger.
struct Installed {
  std::atomic<spdlog::logger*> current{nullptr};
  std::mutex mutex;  // guards `installed` and the registry update of set_logger
  std::vector<std::shared_ptr<spdlog::logger>> installed;
};

Installed& installed() {
  static Installed* state = new Installed();  // never destroyed: lines may be logged at exit
  return *state;
}

// Makes `next` the current logger; `registry`: also update spdlog's registry entry "webhooks".
void install(std::shared_ptr<spdlog::logger> next, bool registry) {
  Installed& state = installed();
  std::lock_guard lock(state.mutex);
  if (registry) {
    spdlog::drop(kLoggerName);
    if (next->name() == kLoggerName) spdlog::register_logger(next);
  }
  state.current.store(next.get(), std::memory_order_release);
  state.installed.push_back(std::move(next));
}

// Installs the default at the first line, unless set_logger ran first: the logger registered
// with spdlog under "webhooks" if the application made one, else "webhooks" with bare lines on
// stderr at info, registered with spdlog (which applies spdlog::set_level's global level to it).
spdlog::logger* install_default() {
  Installed& state = installed();
  std::lock_guard lock(state.mutex);
  spdlog::logger* current = state.current.load(std::memory_order_acquire);
  if (current != nullptr) return current;
  std::shared_ptr<spdlog::logger> made = spdlog::get(kLoggerName);
  if (!made) {
    made = std::make_shared<spdlog::logger>(kLoggerName,
                                            std::make_shared<spdlog::sinks::stderr_sink_mt>());
    spdlog::initialize_logger(made);  // registers it, at the global level
    made->set_pattern("%v");
  }
  state.current.store(made.get(), std::memory_order_release);
  state.installed.push_back(std::move(made));
  return state.current.load(std::memory_order_relaxed);
}

// The current logger: one atomic load once the first line was logged.
spdlog::logger& current_logger() {
  spdlog::logger* current = installed().current.load(std::memory_order_acquire);
  return current != nullptr ? *current : *install_default();
}

// The asynchronous logger's queue, its sink and the logger itself, kept for the exit handler.
struct AsyncLogging {
  std::shared_ptr<spdlog::details::thread_pool> pool;
  std::shared_ptr<spdlog::sinks::sink> sink;
  std::shared_ptr<spdlog::logger> logger;
};

AsyncLogging& async_logging() {
  static AsyncLogging* state = new AsyncLogging();  // never destroyed: used by the exit handler
  return *state;
}

// At exit (return from main or std::exit): lines logged from now on are written synchronously
// by a logger on the same sink, and the queue's thread writes every line queued before it stops.
// The asynchronous logger itself is kept (not destroyed) for a thread still inside a call to it.
// A logger installed after configure_json_logging (set_logger) is left in place.
void finish_logging_at_exit() {
  AsyncLogging& state = async_logging();
  if (!state.pool) return;
  if (installed().current.load(std::memory_order_acquire) == state.logger.get()) {
    auto direct = std::make_shared<spdlog::logger>(kLoggerName, state.sink);
    direct->set_pattern("%v");
    direct->set_level(state.logger->level());
    direct->flush_on(spdlog::level::info);
    install(std::move(direct), false);
  }
  state.pool.reset();  // ~thread_pool: writes the queued lines, then joins its thread
}

// "YYYY-MM-DDTHH:MM:SS" of `seconds` (UTC), formatted again only when the second changes.
std::string_view utc_second(std::time_t seconds) {
  thread_local std::time_t cached = -1;
  thread_local char text[32];
  thread_local std::size_t length = 0;
  if (seconds != cached) {
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    cached = seconds;
  }
  return {text, length};
}

// The lines of this thread's LogBatch (detail/log_batch.h), while one is alive.
struct ThreadBatch {
  bool active = false;
  std::string lines;                                       // joined by '\n'
  spdlog::level::level_enum level = spdlog::level::trace;  // the highest among them
  std::chrono::steady_clock::time_point since{};           // the first one's
};
thread_local ThreadBatch thread_batch;

void hand_over_batch() {
  ThreadBatch& batch = thread_batch;
  if (batch.lines.empty()) return;
  current_logger().log(batch.level, spdlog::string_view_t(batch.lines.data(), batch.lines.size()));
  batch.lines.clear();
  batch.level = spdlog::level::trace;
}

}  // namespace

namespace detail {

LogBatch::LogBatch() { thread_batch.active = true; }
LogBatch::~LogBatch() {
  hand_over_batch();
  thread_batch.active = false;
}
void LogBatch::flush() { hand_over_batch(); }
void LogBatch::flush_if_older(std::chrono::milliseconds age) {
  if (!thread_batch.lines.empty() && std::chrono::steady_clock::now() - thread_batch.since >= age) {
    hand_over_batch();
  }
}

}  // namespace detail

std::shared_ptr<spdlog::logger> logger() {
  spdlog::logger& current = current_logger();
  Installed& state = installed();
  std::lock_guard lock(state.mutex);
  for (const auto& logger : state.installed) {
    if (logger.get() == &current) return logger;
  }
  return nullptr;  // not reached: every current logger is in `installed`
}

void set_logger(std::shared_ptr<spdlog::logger> replacement) {
  if (!replacement) {  // silence: no sink, nothing passes the level test
    replacement = std::make_shared<spdlog::logger>(kLoggerName);
    replacement->set_level(spdlog::level::off);
  }
  install(std::move(replacement), true);
}

bool log_enabled(spdlog::level::level_enum level) { return current_logger().should_log(level); }

void configure_json_logging(const std::string& level) {
  static std::once_flag at_exit;
  AsyncLogging& state = async_logging();
  // The writing thread blocks every signal, so a process-directed one (SIGTERM to a daemon that
  // waits for it with sigwait) is never delivered to it, whenever the caller blocks its own.
  state.pool = std::make_shared<spdlog::details::thread_pool>(kLogQueueLines, 1, [] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
  });
  state.sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  state.logger = std::make_shared<spdlog::async_logger>(kLoggerName, state.sink, state.pool,
                                                        spdlog::async_overflow_policy::block);
  state.logger->set_pattern("%v");
  state.logger->set_level(spdlog::level::from_str(level));
  state.logger->flush_on(spdlog::level::info);  // on the queue's thread, after each message
  set_logger(state.logger);
  // After spdlog's registry was made (set_logger), so this runs before the registry is destroyed.
  std::call_once(at_exit, [] { std::atexit(finish_logging_at_exit); });
}

namespace {

// log_event's line: `fields` with "ts" and "level" added (a field of the same name wins), keys in
// sorted order (nlohmann::json's objects), built in place rather than copied into another object.
std::string format_line(spdlog::level::level_enum level, nlohmann::json& fields) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count();
  const std::string_view second = utc_second(static_cast<std::time_t>(millis / 1000));
  char ts[40];
  std::snprintf(ts, sizeof ts, "%.*s.%03dZ", static_cast<int>(second.size()), second.data(),
                static_cast<int>(millis % 1000));
  const spdlog::string_view_t name = spdlog::level::to_string_view(level);
  fields.emplace("ts", ts);
  fields.emplace("level", std::string(name.data(), name.size()));
  return fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void log_event(spdlog::level::level_enum level, nlohmann::json fields) {
  spdlog::logger& logger = current_logger();
  if (!logger.should_log(level)) return;
  const std::string line = format_line(level, fields);
  hand_over_batch();  // the lines this thread batched before this one go first
  logger.log(level, spdlog::string_view_t(line.data(), line.size()));
}

namespace detail {

void log_batched(spdlog::level::level_enum level, nlohmann::json fields) {
  ThreadBatch& batch = thread_batch;
  if (!batch.active || level >= spdlog::level::warn) {
    log_event(level, std::move(fields));
    return;
  }
  if (!current_logger().should_log(level)) return;
  const std::string line = format_line(level, fields);
  if (batch.lines.empty()) {
    batch.since = std::chrono::steady_clock::now();
  } else {
    batch.lines.push_back('\n');
  }
  batch.lines += line;
  batch.level = std::max(batch.level, level);
  if (batch.lines.size() >= kLogBatchBytes) hand_over_batch();
}

}  // namespace detail

}  // namespace webhooks
