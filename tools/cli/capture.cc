#include "capture.h"

#include <sstream>

#include "cli.h"
#include "webhooks/json_parse.h"
#include "webhooks/wire.h"

namespace webhooks::cli {
namespace {

// The string member `key` of `object`, or nullptr when it is absent or not a string.
const std::string* string_member(const nlohmann::json& object, const std::string& key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

}  // namespace

std::string capture_line(const nlohmann::json& headers, const std::string& body) {
  // Invalid UTF-8 in a header value becomes U+FFFD instead of throwing type_error 316, which
  // would lose the line of a delivery already handled.
  return nlohmann::json{{"headers", headers}, {"body", body}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<Captured> parse_capture(std::string_view text, const std::string& file) {
  std::istringstream lines{std::string(text)};
  std::vector<Captured> captured;
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.empty()) continue;
    const auto bad = [&](const std::string& why) {
      return UsageError(file + ":" + std::to_string(number) + ": " + why);
    };
    const auto capture = parse_json_or_discarded(line);
    if (!capture.is_object()) throw bad("not a JSON object");
    const auto headers = capture.find("headers");
    if (headers == capture.end() || !headers->is_object()) throw bad("no \"headers\" object");
    const std::string* id = string_member(*headers, std::string(kHeaderId));
    if (!id) throw bad("no \"" + std::string(kHeaderId) + "\" string in \"headers\"");
    const std::string* body = string_member(capture, "body");
    if (!body) throw bad("no \"body\" string");
    Captured delivery{*id, *body, std::nullopt};
    if (headers->contains(std::string(kHeaderEventType))) {
      const std::string* type = string_member(*headers, std::string(kHeaderEventType));
      if (!type) throw bad("\"" + std::string(kHeaderEventType) + "\" is not a string");
      delivery.type = *type;
    }
    captured.push_back(std::move(delivery));
  }
  return captured;
}

}  // namespace webhooks::cli
