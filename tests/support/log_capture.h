// Collects the JSON log lines (webhooks::log_event) written while it lives: the tests of the
// publisher's structured log lines.
#pragma once

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "webhooks/log.h"

namespace webhooks::test {

// Collects the JSON log lines (webhooks::log_event) written while it lives.
class LogCapture {
 public:
  LogCapture() : previous_(webhooks::logger()) {
    auto logger = std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(out_));
    logger->set_pattern("%v");
    logger->set_level(spdlog::level::info);
    webhooks::set_logger(logger);
  }
  ~LogCapture() { webhooks::set_logger(previous_); }
  // The lines whose "event" is `event`, without their "ts".
  std::vector<nlohmann::json> lines(const std::string& event) const {
    std::vector<nlohmann::json> out;
    std::istringstream in(out_.str());
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line);
      if (j.value("event", "") != event) continue;
      j.erase("ts");
      out.push_back(std::move(j));
    }
    return out;
  }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace webhooks::test
