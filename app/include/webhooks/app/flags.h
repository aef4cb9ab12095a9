// Command-line conventions every executable of the toolkit shares (CLI11): the same --log-level and
// --sqlite-synchronous values, the same limits and messages for numbers, --listen, --secret and
// tokens checked while parsing, and exit code 2 for any usage error (0 for --help and --version).
// Secret flags also come from a file or the environment: secret_flags.h.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "webhooks/duration.h"

namespace webhooks::app {

// Exit code of a command line that could not be parsed.
inline constexpr int kUsageExitCode = 2;

// Parses argv with `app`. Returns std::nullopt when the program should go on, otherwise the exit
// code: 0 after --help or --version (printed on stdout), kUsageExitCode after a usage error
// (CLI11's message on stderr), whatever CLI11's own code for it.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

// The deepest nesting of [ ] lists a --config file may use (the same 128 as JSON, json_parse.h).
inline constexpr std::size_t kMaxConfigNesting = 128;

// CLI11's TOML/INI config reader with a nesting check in front: a file whose lists (outside
// quotes and comments) nest deeper than kMaxConfigNesting is a usage error, "--config: line N:
// lists nested deeper than the limit of 128", before CLI11 reads it (CLI11 2.1 reads nested lists
// recursively: 100,000 levels took 14 s and then overflowed the stack). A file that names both a
// secret flag and its file flag (admin-token and admin-token-file, secret_flags.h) is a usage
// error too: "--admin-token and --admin-token-file were both given; give one of them". Install it
// with app.config_formatter(bounded_config()) after app.set_config(...).
std::shared_ptr<CLI::Config> bounded_config();

// --log-level: debug, info, warn or error, any case (the value becomes lower case).
CLI::Validator log_levels();
// --sqlite-synchronous: db::kSqliteSynchronousValues (NORMAL, FULL, EXTRA), any case (the value
// becomes upper case).
CLI::Validator sqlite_synchronous_values();

// The longest duration any numeric flag takes: 10 years (315,360,000 s). Longer is surely a
// mistake, and the bound keeps every conversion to milliseconds, and its sum with the current
// time, far from overflowing std::int64_t.
inline constexpr std::chrono::seconds kMaxFlagDuration{std::int64_t{10} * 365 * 24 * 3600};

// How a duration flag is written and kept.
enum class DurationUnit {
  seconds,        // seconds with an optional fraction, kept in whole milliseconds: --lease 0.5
  whole_seconds,  // whole seconds: --tolerance 300
  milliseconds,   // whole milliseconds: the deprecated --delay-ms 250 (hold it in std::int64_t)
};
enum class Zero { refused, allowed };

// A duration flag in `unit`: from its smallest step (0.001 s, 1 s or 1 ms; 0 when zero is
// allowed) to kMaxFlagDuration, checked as CLI11 will convert it, so non-numbers, NaN, infinities,
// fractions of a whole unit and values that would round to 0 or overflow are refused, e.g.
// "--lease: must be a number of seconds from 0.001 to 315360000 (10 years), not 1e-9".
CLI::Validator duration(DurationUnit unit, Zero zero = Zero::refused);

// A duration flag written with a unit, the grammar of webhooks/duration.h: a whole number and ms,
// s, m, h or d ("500ms", "30s", "5m", "2h", "7d"), at most 365d, greater than 0 unless zero is
// allowed. Keep the text and convert it with webhooks::parse_duration once parsed. Messages, e.g.
// "--request-timeout: duration \"30\" has no unit; use ms, s, m, h or d", "--timeout: must be
// greater than 0, e.g. \"5s\"". A flag that used to take a bare number puts
// deprecated_bare_number (deprecated_flags.h) before it.
CLI::Validator duration_text(Zero zero = Zero::refused);

// How add_duration keeps a duration in a number.
enum class StoreAs { milliseconds, seconds };

// Adds the flag `name`, a duration with a unit (duration_text(zero)), kept in `target` as a number
// of milliseconds or seconds (a fraction when `target` is floating point); --help shows the
// current value of `target` with a unit as the default. Returns the option, e.g. for
// add_deprecated_alias (deprecated_flags.h).
template <typename T>
CLI::Option* add_duration(CLI::App& app, const std::string& name, T& target, StoreAs as,
                          const std::string& help, Zero zero = Zero::refused) {
  const double scale = as == StoreAs::seconds ? 1000.0 : 1.0;  // milliseconds per unit of target
  const auto shown = std::chrono::milliseconds(std::llround(static_cast<double>(target) * scale));
  return app
      .add_option_function<std::string>(
          name,
          [&target, scale](const std::string& text) {
            target = static_cast<T>(static_cast<double>(parse_duration(text).count()) / scale);
          },
          help)
      ->check(duration_text(zero))
      ->default_str(format_duration(shown));
}

// A count flag: a whole number from `min` to `max` (an int), e.g.
// "--partner-attempts: must be a whole number from 1 to 2147483647, not 0".
CLI::Validator count(int min, int max = std::numeric_limits<int>::max());

// The latest Unix time in whole seconds a flag takes: 9999-12-31T23:59:59Z, the last second an
// RFC 3339 timestamp can write. Later is surely a mistake, and far from overflowing anything.
inline constexpr std::int64_t kMaxUnixSeconds = 253'402'300'799;

// A Unix time in whole seconds from 0 to `max`, in decimal digits, e.g.
// "--now: must be a whole number of Unix seconds from 0 to 253402300799 (9999-12-31T23:59:59Z),
// not -1".
CLI::Validator unix_seconds(std::int64_t max = kMaxUnixSeconds);

// A flag checked by duration(DurationUnit::seconds), in milliseconds (rounded to the nearest).
std::chrono::milliseconds seconds_to_millis(double seconds);

// Accepts a value when `parse(value)` does not throw webhooks::Error; otherwise the error's message
// is CLI11's, after the flag's name. `tag` is what --help shows after the value's type.
CLI::Validator accepted_by(const std::string& tag, std::function<void(const std::string&)> parse);

// --listen: HOST:PORT or [IPv6]:PORT with a port from 0 to 65535 (parse_listen, server.h), e.g.
// "--listen: the port of 127.0.0.1:99999 must be a number from 0 to 65535 (expected HOST:PORT)",
// "--listen: 127.0.0.1:0:0 has more than one ':'; write an IPv6 host in brackets, e.g.
// [::1]:8080 (expected HOST:PORT)".
CLI::Validator listen_address();

// A server's base URL for an HTTP client (orders-api's --partner-url and --publisher-url):
// http://HOST[:PORT], or also https://HOST[:PORT] when `https` is true; HOST a name, an IPv4
// address or a bracketed IPv6 address, PORT from 1 to 65535, no path, query or user. The message
// quotes the value and says what is wrong, e.g. "--publisher-url: 127.0.0.1:8780 does not start
// with http:// or https:// (expected http://HOST:PORT or https://HOST:PORT)".
CLI::Validator server_url(bool https);

// --secret: a Standard Webhooks secret that Secret::parse accepts. The message says what is wrong
// without repeating the value, e.g. "--secret: secret is not valid base64 (...)".
CLI::Validator signing_secret();

// --provider: standard, stripe, github, shopify or slack (providers::parse_provider).
CLI::Validator provider_name();
// --secret beside --provider: signing_secret() while *provider is "standard", else any non-empty
// value (other providers' secrets are raw strings, webhooks/providers/provider.h). *provider is
// read when a value is checked: add --provider before the secret flag (CLI11 runs the options'
// callbacks in the order they were added, and secret files after).
CLI::Validator provider_secret(const std::string* provider);

// The longest bearer token or API key a flag takes: 4096 characters (cpp-httplib reads a header
// line of at most 8192 bytes).
inline constexpr std::size_t kMaxTokenLength = 4096;

// --admin-token, --publisher-token: a bearer token of 1 to kMaxTokenLength visible ASCII
// characters (0x21 to 0x7E: no spaces or control characters, which no Authorization header can
// carry). The message does not repeat the value: "--admin-token: must be 1 to 4096 visible ASCII
// characters (no spaces or control characters)".
CLI::Validator bearer_token();

// orders-api's --api-key: KEY:MERCHANT_ID, the key a bearer token as above without ':' or ',',
// the merchant id 1 to 4096 visible ASCII characters without ','. The message does not repeat
// the value: "--api-key: must be KEY:MERCHANT_ID, e.g. sk_test_1:merchant_1, each part of visible
// ASCII characters other than ','".
CLI::Validator api_key();

}  // namespace webhooks::app
