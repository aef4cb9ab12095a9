// The publisher's admin API from the CLI (admin.cc): its base URL and bearer token as flags of a
// subcommand, and one request that prints what went wrong.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace webhooks::cli {

struct Publisher {
  std::string url = "http://127.0.0.1:8780";
  std::string token;
};

// --publisher-url and --admin-token (--admin-token-file, WEBHOOKS_ADMIN_TOKEN) on `cmd`.
void add_publisher_options(CLI::App* cmd, Publisher& p);

// Sends a GET, a PATCH of the JSON `body` (`method` "PATCH") or a POST of it (any other) to the
// admin API; prints
// errors on stderr ("webhooks: the publisher answered 400: {...}"); returns the parsed JSON body on
// 2xx, std::nullopt otherwise.
std::optional<nlohmann::json> call(const Publisher& p, const std::string& method,
                                   const std::string& path, const std::string& body = "");

}  // namespace webhooks::cli
