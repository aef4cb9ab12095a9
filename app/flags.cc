#include "webhooks/app/flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "webhooks/app/server.h"
#include "webhooks/db.h"
#include "webhooks/duration.h"
#include "webhooks/error.h"
#include "webhooks/providers/provider.h"
#include "webhooks/rfc3339.h"
#include "webhooks/secret.h"

namespace webhooks::app {
namespace {

constexpr std::int64_t kMaxSeconds = kMaxFlagDuration.count();

// A validator that accepts `text` when `holds(text)` and otherwise says "must be <rule>, not
// <text>". `tag` is what --help shows after the type. CLI::Range prints a double's bounds with
// 300 digits; these messages print them as written here.
CLI::Validator rule(const std::string& tag, const std::string& what,
                    std::function<bool(const std::string&)> holds) {
  return CLI::Validator(
      [what, holds](std::string& text) -> std::string {
        return holds(text) ? std::string() : "must be " + what + ", not " + text;
      },
      tag);
}

// A validator for secrets: says `message` when `holds(text)` is false, never the value.
CLI::Validator rule_without_value(const std::string& tag, const std::string& message,
                                  std::function<bool(const std::string&)> holds) {
  return CLI::Validator(
      [message, holds](std::string& text) { return holds(text) ? std::string() : message; }, tag);
}

// A whole number from `min` to `max`, written in decimal digits only (CLI11 would read "010" as
// octal 8 and "0x10" as 16; "1.5" and "1e3" it refuses):
// "must be a whole number <of>from <min> to <max><note>, not <text>".
CLI::Validator whole_number(const std::string& tag, const std::string& of, std::int64_t min,
                            std::int64_t max, const std::string& note = "") {
  return rule(
      tag,
      "a whole number " + of + "from " + std::to_string(min) + " to " + std::to_string(max) + note,
      [min, max](const std::string& text) {
        const bool decimal = !text.empty() &&
                             text.find_first_not_of("0123456789") == std::string::npos &&
                             (text.size() == 1 || text[0] != '0');
        std::int64_t value = 0;
        return decimal && CLI::detail::lexical_cast(text, value) && value >= min && value <= max;
      });
}

bool is_host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
}

bool is_ipv6_char(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':'; }

// Throws Error(invalid_argument) unless `text` is http://HOST[:PORT] (or https:// when `https`):
// what httplib::Client reads as a base URL (a path, or a dotted IPv6 form, would be taken for a
// host name and never connect).
void check_server_url(const std::string& text, bool https) {
  const std::string expected = https ? "http://HOST:PORT or https://HOST:PORT" : "http://HOST:PORT";
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::invalid_argument, text + " " + why + " (expected " + expected + ")");
  };
  std::string_view rest = text;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (https && rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else {
    throw bad(https ? "does not start with http:// or https://" : "does not start with http://");
  }
  if (rest.find_first_of("/?#") != std::string_view::npos) {
    throw bad("has a path; give the scheme, host and port only");
  }
  if (rest.find('@') != std::string_view::npos) {
    throw bad("has a user name; give the scheme, host and port only");
  }
  std::string_view host = rest, port;
  bool has_port = false;
  if (rest.starts_with('[')) {
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos) throw bad("has no ']' after its IPv6 address");
    host = rest.substr(1, close - 1);
    const std::string_view after = rest.substr(close + 1);
    if (!after.empty() && !after.starts_with(':')) {
      throw bad("needs a ':' between ']' and the port");
    }
    has_port = !after.empty();
    if (has_port) port = after.substr(1);
    if (host.empty() || !std::all_of(host.begin(), host.end(), is_ipv6_char)) {
      throw bad("has an invalid IPv6 address (hexadecimal digits and ':' only)");
    }
  } else {
    const std::size_t colon = rest.find(':');
    has_port = colon != std::string_view::npos;
    if (has_port) {
      host = rest.substr(0, colon);
      port = rest.substr(colon + 1);
    }
    if (host.empty()) throw bad("has no host");
    if (!std::all_of(host.begin(), host.end(), is_host_char)) {
      throw bad("has a host with characters other than letters, digits, '-', '_' and '.'");
    }
  }
  if (has_port) {
    int number = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (port.empty() || port.find_first_not_of("0123456789") != std::string_view::npos ||
        ec != std::errc() || end != port.data() + port.size() || number < 1 || number > 65535) {
      throw bad("has a port that is not a number from 1 to 65535");
    }
  }
}

// True when `text` is 1 to kMaxTokenLength visible ASCII characters, none of them in `refused`.
bool visible_ascii(std::string_view text, std::string_view refused = "") {
  return !text.empty() && text.size() <= kMaxTokenLength &&
         std::all_of(text.begin(), text.end(), [refused](char c) {
           return c >= 0x21 && c <= 0x7E && refused.find(c) == std::string_view::npos;
         });
}

}  // namespace

namespace {

class BoundedConfig : public CLI::ConfigTOML {
 public:
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    const std::string text((std::istreambuf_iterator<char>(input)),
                           std::istreambuf_iterator<char>());
    std::size_t depth = 0, line = 1;
    char quote = 0;
    bool comment = false;
    for (char c : text) {
      if (c == '\n') {
        ++line;
        quote = 0;
        comment = false;
      } else if (comment) {
      } else if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '#' || c == ';') {
        comment = true;
      } else if (c == '[') {
        if (++depth > kMaxConfigNesting) {
          throw CLI::ConfigError("--config: line " + std::to_string(line) +
                                 ": lists nested deeper than the limit of " +
                                 std::to_string(kMaxConfigNesting));
        }
      } else if (c == ']' && depth > 0) {
        --depth;
      }
    }
    std::istringstream copy(text);
    std::vector<CLI::ConfigItem> items = CLI::ConfigTOML::from_config(copy);
    refuse_secret_twice(items);
    return items;
  }

 private:
  // A secret flag and its file flag (secret_flags.h) both in the file: refused here, since CLI11
  // would skip the second of them silently when the file flag comes first.
  static void refuse_secret_twice(const std::vector<CLI::ConfigItem>& items) {
    std::set<std::string> names;
    for (const CLI::ConfigItem& item : items) names.insert(item.fullname());
    for (const std::string& name : names) {
      const std::string suffix = "-file";
      if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
      const std::string flag = name.substr(0, name.size() - suffix.size());
      if (names.count(flag) != 0) {
        throw CLI::ConfigError("--" + flag + " and --" + name +
                               " were both given; give one of them");
      }
    }
  }
};

}  // namespace

std::shared_ptr<CLI::Config> bounded_config() { return std::make_shared<BoundedConfig>(); }

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsageExitCode;
  }
}

CLI::Validator log_levels() {
  return CLI::IsMember(std::vector<std::string>{"debug", "info", "warn", "error"},
                       CLI::ignore_case);
}

CLI::Validator sqlite_synchronous_values() {
  const std::vector<std::string> values(std::begin(db::kSqliteSynchronousValues),
                                        std::end(db::kSqliteSynchronousValues));
  return CLI::IsMember(values, CLI::ignore_case);
}

CLI::Validator duration(DurationUnit unit, Zero zero) {
  const bool zero_ok = zero == Zero::allowed;
  const std::string tag = zero_ok ? "NONNEGATIVE" : "POSITIVE";
  const std::string years = " (10 years)";
  const std::int64_t min = zero_ok ? 0 : 1;
  if (unit == DurationUnit::seconds) {
    const double least = zero_ok ? 0.0 : 0.001;  // 1 ms, the step it is kept in
    return rule(tag,
                std::string("a number of seconds from ") + (zero_ok ? "0" : "0.001") + " to " +
                    std::to_string(kMaxSeconds) + years,
                [least](const std::string& text) {
                  double value = 0;
                  return CLI::detail::lexical_cast(text, value) && std::isfinite(value) &&
                         value >= least && value <= static_cast<double>(kMaxSeconds);
                });
  }
  const bool ms = unit == DurationUnit::milliseconds;
  const std::int64_t max = ms ? std::chrono::milliseconds(kMaxFlagDuration).count() : kMaxSeconds;
  return whole_number(tag, ms ? "of milliseconds " : "of seconds ", min, max, years);
}

CLI::Validator duration_text(Zero zero) {
  return accepted_by("DURATION", [zero](const std::string& text) {
    if (parse_duration(text).count() == 0 && zero == Zero::refused) {
      throw Error(ErrorCode::invalid_argument, "must be greater than 0, e.g. \"5s\"");
    }
  });
}

CLI::Validator count(int min, int max) {
  return whole_number(min > 0 ? "POSITIVE" : "NONNEGATIVE", "", min, max);
}

CLI::Validator unix_seconds(std::int64_t max) {
  std::string latest = format_rfc3339(max * 1000);  // "9999-12-31T23:59:59.000Z"
  latest.erase(latest.size() - 5, 4);               // without the milliseconds
  return whole_number("UNIX_SECONDS", "of Unix seconds ", 0, max, " (" + latest + ")");
}

std::chrono::milliseconds seconds_to_millis(double seconds) {
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

CLI::Validator accepted_by(const std::string& tag, std::function<void(const std::string&)> parse) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        try {
          parse(text);
          return {};
        } catch (const Error& e) {
          return e.what();
        }
      },
      tag);
}

CLI::Validator listen_address() {
  return accepted_by("HOST:PORT", [](const std::string& text) { parse_listen(text); });
}

CLI::Validator server_url(bool https) {
  return accepted_by("URL", [https](const std::string& text) { check_server_url(text, https); });
}

CLI::Validator signing_secret() {
  return accepted_by("whsec_...", [](const std::string& text) { Secret::parse(text); });
}

CLI::Validator provider_name() {
  return accepted_by("NAME", [](const std::string& text) {
    if (!providers::parse_provider(text)) {
      throw Error(ErrorCode::invalid_argument, "unknown provider " + text + " (one of " +
                                                   std::string(providers::kProviderNames) + ")");
    }
  });
}

CLI::Validator provider_secret(const std::string* provider) {
  return accepted_by("whsec_...", [provider](const std::string& text) {
    if (*provider == "standard") {
      Secret::parse(text);
    } else if (text.empty()) {
      throw Error(ErrorCode::invalid_secret, "secret is empty");
    }
  });
}

CLI::Validator bearer_token() {
  return rule_without_value("TOKEN",
                            "must be 1 to " + std::to_string(kMaxTokenLength) +
                                " visible ASCII characters (no spaces or control characters)",
                            [](const std::string& text) { return visible_ascii(text); });
}

CLI::Validator api_key() {
  return rule_without_value(
      "KEY:MERCHANT_ID",
      "must be KEY:MERCHANT_ID, e.g. sk_test_1:merchant_1, each part of visible ASCII characters "
      "other than ','",
      [](const std::string& text) {
        const std::size_t colon = text.find(':');
        return colon != std::string::npos &&
               visible_ascii(std::string_view(text).substr(0, colon), ":,") &&
               visible_ascii(std::string_view(text).substr(colon + 1), ",");
      });
}

}  // namespace webhooks::app
