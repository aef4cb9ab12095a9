// Log output in tests: a logger writing to a stream, and the lines of what was written.
#pragma once

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace webhooks::test {

// A logger named `name` writing to `out` with `pattern`, from `level` up.
inline std::shared_ptr<spdlog::logger> stream_logger(const std::string& name, std::ostream& out,
                                                     const std::string& pattern,
                                                     spdlog::level::level_enum level) {
  auto logger =
      std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_pattern(pattern);
  logger->set_level(level);
  return logger;
}

// The lines of `text`, without their line ends.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace webhooks::test
