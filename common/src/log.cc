#include "webhooks/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <chrono>
#include <ctime>

namespace webhooks {

void configure_json_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("webhooks");
  logger->set_pattern("%v");
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void log_event(spdlog::level::level_enum level, nlohmann::json fields) {
  if (!spdlog::should_log(level)) return;
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t seconds = system_clock::to_time_t(now);
  const auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char ts[40];
  const std::size_t n = std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(ts + n, sizeof ts - n, ".%03dZ", static_cast<int>(millis));
  nlohmann::json line = {{"ts", ts}, {"level", std::string(spdlog::level::to_string_view(level).data(),
                                                  spdlog::level::to_string_view(level).size())}};
  line.update(fields);
  spdlog::log(level, "{}", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace webhooks
