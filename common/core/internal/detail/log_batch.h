// Batching of log lines per thread, for a thread that logs many lines in quick succession (an
// HTTP event loop serving its requests on fibers: the receiver's line per delivery). While a
// LogBatch is alive on a thread, the info and debug lines that thread logs through log_batched
// are collected and handed to the logger as one message (lines joined by '\n') at flush(), when
// kLogBatchBytes are collected, or before any other line of the same thread (so the lines of one
// thread stay in order). With the asynchronous logger (configure_json_logging) that is one
// hand-over to its writing thread for many lines instead of one each, which woke that thread
// once a line. Internal to the toolkit (common/http's event loop).
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>

namespace webhooks::detail {

// webhooks::log_event for a routine line logged once a request (an outcome, logged as the request
// ends: never before the thread may block, which would hold the line back): collected in this
// thread's LogBatch if one is alive and `level` is below warn, else log_event at once.
void log_batched(spdlog::level::level_enum level, nlohmann::json fields);

// Bytes of lines a batch collects at most before it hands them over.
inline constexpr std::size_t kLogBatchBytes = 16 * 1024;
// How long a line may wait in the batch of a busy event loop (flush_if_older).
inline constexpr std::chrono::milliseconds kLogBatchAge{100};

class LogBatch {
 public:
  // Starts batching on this thread (one LogBatch a thread at a time).
  LogBatch();
  // Hands over what is collected and stops batching.
  ~LogBatch();
  LogBatch(const LogBatch&) = delete;
  LogBatch& operator=(const LogBatch&) = delete;

  // Hands the collected lines to the logger now, if there are any.
  void flush();
  // flush(), if the oldest collected line has waited `age` or longer.
  void flush_if_older(std::chrono::milliseconds age);
};

}  // namespace webhooks::detail
