// webhooks::log_event through configure_json_logging's asynchronous logger, in a child process
// whose stderr is a file: every line is on disk once the process has exited, in order, in the
// line format the daemons' tests and operators read.
#include "webhooks/log.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "detail/log_batch.h"
#include "support/log_lines.h"
#include "support/test_env.h"

namespace {

// Forks; the child points stderr at `path`, configures the JSON logger, runs `body` and leaves
// with std::exit(0) (the at-exit path of a daemon returning from main). Returns the wait status.
template <typename Body>
int in_child(const std::string& path, Body body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::dup2(fd, STDERR_FILENO) < 0) ::_exit(90);
    webhooks::configure_json_logging("info");
    body();
    std::exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

using webhooks::test::lines_of;

}  // namespace

TEST_CASE("log_event: 3 x kLogQueueLines lines from 3 threads, all on stderr at exit, in order") {
  const std::string path = webhooks::test::temp_dir("log-async") + "/stderr";
  constexpr int kPerThread = static_cast<int>(webhooks::kLogQueueLines);  // fills the queue
  const int status = in_child(path, [] {
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([t] {
        for (int i = 0; i < kPerThread; ++i) {
          webhooks::log_event(spdlog::level::info, {{"event", "line"}, {"thread", t}, {"n", i}});
        }
      });
    }
    for (auto& thread : threads) thread.join();
    webhooks::log_event(spdlog::level::debug, {{"event", "below the level"}});
    webhooks::log_event(spdlog::level::warn, {{"event", "last"}, {"level", "kept"}});
  });
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const std::vector<std::string> lines = lines_of(webhooks::test::read_file(path));
  REQUIRE(lines.size() == 3 * kPerThread + 1);
  // Keys in sorted order, "ts" UTC with milliseconds: the format tests and operators read.
  const std::string ts = R"("ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")";
  const std::regex line_format(R"(\{"event":"line","level":"info","n":(\d+),"thread":(\d),)" + ts +
                               R"(\})");
  int next[3] = {0, 0, 0};
  for (std::size_t k = 0; k + 1 < lines.size(); ++k) {
    std::smatch m;
    INFO(lines[k]);
    REQUIRE(std::regex_match(lines[k], m, line_format));
    const int thread = std::stoi(m[2].str());
    REQUIRE(std::stoi(m[1].str()) == next[thread]);  // each thread's lines in the order logged
    ++next[thread];
  }
  CHECK(next[0] == kPerThread);
  CHECK(next[1] == kPerThread);
  CHECK(next[2] == kPerThread);
  // A field named like an added one wins, as before; the debug line is below the level.
  CHECK(std::regex_match(lines.back(),
                         std::regex(R"(\{"event":"last","level":"kept",)" + ts + R"(\})")));
}

namespace {

// The line log_event writes for `fields`, without its "ts" (the time it was logged).
std::string without_ts(const std::string& text) {
  return std::regex_replace(text, std::regex(R"(,"ts":"[^"]*")"), "");
}

}  // namespace

TEST_CASE(
    "LogBatch: a thread's batched info lines reach the logger as one message at flush, before "
    "its warning or other line, at kLogBatchBytes and at its end") {
  std::ostringstream out;
  const auto previous = webhooks::logger();
  webhooks::set_logger(webhooks::test::stream_logger("batch", out, "%l|%v", spdlog::level::debug));
  {
    webhooks::detail::LogBatch batch;
    webhooks::detail::log_batched(spdlog::level::debug, {{"event", "a"}});
    webhooks::detail::log_batched(spdlog::level::info, {{"event", "b"}});
    CHECK(out.str().empty());  // collected
    batch.flush();
    CHECK(without_ts(out.str()) ==
          "info|{\"event\":\"a\",\"level\":\"debug\"}\n{\"event\":\"b\",\"level\":\"info\"}\n");
    batch.flush();  // nothing collected: nothing handed over
    CHECK(without_ts(out.str()) ==
          "info|{\"event\":\"a\",\"level\":\"debug\"}\n{\"event\":\"b\",\"level\":\"info\"}\n");

    out.str("");
    webhooks::detail::log_batched(spdlog::level::info, {{"event", "c"}});
    webhooks::detail::log_batched(spdlog::level::warn, {{"event", "d"}});  // after c, at once
    CHECK(without_ts(out.str()) ==
          "info|{\"event\":\"c\",\"level\":\"info\"}\nwarning|{\"event\":\"d\",\"level\":"
          "\"warning\"}\n");

    out.str("");
    batch.flush_if_older(std::chrono::hours(1));
    webhooks::detail::log_batched(spdlog::level::info, {{"event", "e"}});
    batch.flush_if_older(std::chrono::hours(1));  // younger than an hour: kept
    CHECK(out.str().empty());
    batch.flush_if_older(std::chrono::milliseconds(0));
    CHECK(without_ts(out.str()) == "info|{\"event\":\"e\",\"level\":\"info\"}\n");

    // Lines of 1,000 bytes and more: handed over as soon as kLogBatchBytes are collected.
    out.str("");
    const std::string filler(1000, 'x');
    int logged = 0;
    while (out.str().empty() && logged < 100) {
      webhooks::detail::log_batched(spdlog::level::info, {{"event", "f"}, {"n", filler}});
      ++logged;
    }
    // Lines of 1,067 bytes ("ts" included): 15 and their separators are 16,019 bytes, 16 are
    // 17,087.
    CHECK(logged == 16);
    const std::string handed = out.str();
    CHECK(std::count(handed.begin(), handed.end(), '\n') == 16);
    CHECK(handed.size() == 5 + 16 * 1067 + 16);  // "info|", the lines, 15 separators, the end
    // log_event hands over what was batched first, then its line, at once.
    out.str("");
    webhooks::detail::log_batched(spdlog::level::info, {{"event", "g"}});
    webhooks::log_event(spdlog::level::info, {{"event", "h"}});
    CHECK(without_ts(out.str()) ==
          "info|{\"event\":\"g\",\"level\":\"info\"}\ninfo|{\"event\":\"h\",\"level\":\"info\"}\n");
    out.str("");
    webhooks::detail::log_batched(spdlog::level::info, {{"event", "i"}});
  }
  // The batch's end hands over the rest; after it, each line at once.
  CHECK(without_ts(out.str()) == "info|{\"event\":\"i\",\"level\":\"info\"}\n");
  out.str("");
  webhooks::detail::log_batched(spdlog::level::info, {{"event", "j"}});
  CHECK(without_ts(out.str()) == "info|{\"event\":\"j\",\"level\":\"info\"}\n");
  webhooks::set_logger(previous);
}
