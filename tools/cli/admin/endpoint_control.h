// The delivery-control flags of `webhooks endpoint create` and `update` (rate limit, ordering,
// static headers, credentials, mutual TLS) and the members of the admin API's body they give:
// docs/operations.md, "Admin API"; docs/publisher-delivery.md, "Delivery control per endpoint".
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace webhooks::cli {

// The delivery-control flags (docs/operations.md, "Admin API"); empty or unset: unchanged.
struct ControlArgs {
  std::string rate_limit;            // N, or "none"
  std::string ordering;              // none | fifo
  std::vector<std::string> headers;  // "Name: value"
  bool clear_headers = false;
  std::string auth;  // bearer | basic | none
  std::string auth_token_file, auth_username, auth_password_file;
  std::string client_certificate_file, client_key_file;
  bool no_client_certificate = false;
};

// Adds the flags to `cmd`; `update` adds the ways to remove (none, --clear-headers,
// --no-client-certificate).
void add_control_options(CLI::App* cmd, ControlArgs& c, bool update);

// Sets the members of `body` that the flags give (unset flags: nothing). Reads the credential
// files. Throws UsageError for flags that do not go together or a bad value.
void add_control_fields(const ControlArgs& c, nlohmann::json& body);

}  // namespace webhooks::cli
