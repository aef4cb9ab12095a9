// The publisher's admin API from the CLI (admin.cc): its base URL and bearer token as flags of a
// subcommand, and one request that prints what went wrong.
#pragma once

#include <httplib.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace webhooks::cli {

struct Publisher {
  std::string url = "http://127.0.0.1:8780";
  std::string token;
};

// --publisher-url (WEBHOOKS_PUBLISHER_URL) and --admin-token (--admin-token-file,
// WEBHOOKS_ADMIN_TOKEN) on `cmd`; with `token_required`, a command line without a token is a
// usage error (exit 2) before anything is sent, else the caller checks (require_token).
void add_publisher_options(CLI::App* cmd, Publisher& p, bool token_required = true);
// Throws UsageError "--admin-token is required: …" when `p` has no token.
void require_token(const Publisher& p);

// An answer of the admin API: its status (0 when there was none, or a 2xx that was not JSON),
// its headers and its JSON body ({} when empty; only for a 2xx).
struct ApiAnswer {
  int status = 0;
  httplib::Headers headers;
  nlohmann::ordered_json body;  // members in the API's order
  bool ok() const { return status >= 200 && status < 300; }
};

// Sends `method` ("GET", "POST", "PATCH" or "DELETE"; POST and PATCH with the JSON `body`) to the
// admin API at `path`, with `headers` besides the bearer token. Prints what went wrong on stderr
// ("webhooks: the publisher answered 400: {...}", "webhooks: no answer from the publisher at URL:
// cannot connect (…)") unless the answer is ok(). Timeouts: 5 s to connect, 30 s to read.
ApiAnswer request(const Publisher& p, const std::string& method, const std::string& path,
                  const std::string& body = "", const httplib::Headers& headers = {});

// request()'s body when ok(), else std::nullopt.
std::optional<nlohmann::ordered_json> call(const Publisher& p, const std::string& method,
                                           const std::string& path, const std::string& body = "");

}  // namespace webhooks::cli
