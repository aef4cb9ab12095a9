// An application that registers its own spdlog logger named "webhooks" before the libraries log
// their first line gets every line through it (webhooks::logger() adopts it). Its own executable:
// the adoption happens once per process, at the first line.
#include <spdlog/sinks/ostream_sink.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/log_lines.h"
#include "webhooks/log.h"

TEST_CASE("a logger registered as \"webhooks\" before the first line is the libraries' logger") {
  std::ostringstream out;
  auto mine = webhooks::test::stream_logger("webhooks", out, "%l|%v", spdlog::level::warn);
  spdlog::register_logger(mine);
  webhooks::log_event(spdlog::level::info, {{"event", "below warn"}});
  webhooks::log_event(spdlog::level::warn, {{"event", "adopted"}, {"n", 1}});
  CHECK(webhooks::logger() == mine);
  const std::string text = out.str();
  REQUIRE(text.rfind("warning|", 0) == 0);
  REQUIRE(text.back() == '\n');
  nlohmann::json line = nlohmann::json::parse(text.substr(8, text.size() - 9));
  line.erase("ts");
  CHECK(line == nlohmann::json{{"event", "adopted"}, {"level", "warning"}, {"n", 1}});
}
