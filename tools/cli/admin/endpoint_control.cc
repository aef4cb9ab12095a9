#include "admin/endpoint_control.h"

#include "cli.h"

namespace webhooks::cli {
namespace {

// A secret read from a file (or "-": standard input), without its trailing line break.
std::string read_secret_file(const std::string& path) {
  std::string text = read_input(path);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

void add_control_options(CLI::App* cmd, ControlArgs& c, bool update) {
  cmd->add_option("--rate-limit", c.rate_limit,
                  update ? "deliveries per second at most (1..100000), or none for no limit"
                         : "deliveries per second at most (1..100000; default: none)");
  cmd->add_option("--ordering", c.ordering,
                  "fifo: one event at a time per ordering key, in acceptance order; none (the "
                  "default): in parallel")
      ->check(CLI::IsMember({"none", "fifo"}));
  cmd->add_option("--header", c.headers,
                  "a static header added to each delivery, \"Name: value\"; repeatable" +
                      std::string(update ? " (replaces the endpoint's set)" : ""));
  cmd->add_option("--auth", c.auth,
                  "a credential sent with each delivery besides the signature: bearer "
                  "(--auth-token-file), basic (--auth-username, --auth-password-file)" +
                      std::string(update ? " or none" : ""))
      ->check(CLI::IsMember(update ? std::vector<std::string>{"bearer", "basic", "none"}
                                   : std::vector<std::string>{"bearer", "basic"}));
  cmd->add_option("--auth-token-file", c.auth_token_file, "file (or -) holding the bearer token");
  cmd->add_option("--auth-username", c.auth_username, "the basic credential's username");
  cmd->add_option("--auth-password-file", c.auth_password_file,
                  "file (or -) holding the basic credential's password");
  cmd->add_option("--client-certificate", c.client_certificate_file,
                  "PEM file: mutual TLS client certificate for an https:// endpoint")
      ->check(CLI::ExistingFile);
  cmd->add_option("--client-key", c.client_key_file, "PEM file: its private key")
      ->check(CLI::ExistingFile);
  if (update) {
    cmd->add_flag("--clear-headers", c.clear_headers, "remove every static header");
    cmd->add_flag("--no-client-certificate", c.no_client_certificate,
                  "remove the client certificate");
  }
}

// The delivery-control members of a create or update body. Throws UsageError for flags that do
// not go together.
void add_control_fields(const ControlArgs& c, nlohmann::json& body) {
  if (c.rate_limit == "none") {
    body["rate_limit"] = nullptr;
  } else if (!c.rate_limit.empty()) {
    try {
      std::size_t used = 0;
      const long n = std::stol(c.rate_limit, &used);
      if (used != c.rate_limit.size() || n < 1 || n > 100'000) {
        throw std::invalid_argument(c.rate_limit);
      }
      body["rate_limit"] = n;
    } catch (const std::exception&) {
      throw UsageError("--rate-limit must be a whole number from 1 to 100000, or none");
    }
  }
  if (!c.ordering.empty()) body["ordering"] = c.ordering;
  if (c.auth != "bearer" && !c.auth_token_file.empty()) {
    throw UsageError("--auth-token-file goes with --auth bearer");
  }
  if (c.auth != "basic" && (!c.auth_username.empty() || !c.auth_password_file.empty())) {
    throw UsageError("--auth-username and --auth-password-file go with --auth basic");
  }
  if (c.clear_headers) body["headers"] = nlohmann::json::object();
  if (!c.headers.empty()) {
    nlohmann::json headers = nlohmann::json::object();
    for (const std::string& h : c.headers) {
      auto [name, value] = parse_header_flag(h);
      if (headers.contains(name)) throw UsageError("--header " + name + " is given twice");
      headers[name] = std::move(value);
    }
    body["headers"] = headers;
  }
  if (c.auth == "none") {
    body["auth"] = nullptr;
  } else if (c.auth == "bearer") {
    if (c.auth_token_file.empty()) throw UsageError("--auth bearer needs --auth-token-file");
    body["auth"] = {{"type", "bearer"}, {"token", read_secret_file(c.auth_token_file)}};
  } else if (c.auth == "basic") {
    if (c.auth_username.empty() || c.auth_password_file.empty()) {
      throw UsageError("--auth basic needs --auth-username and --auth-password-file");
    }
    body["auth"] = {{"type", "basic"},
                    {"username", c.auth_username},
                    {"password", read_secret_file(c.auth_password_file)}};
  }
  if (c.no_client_certificate) {
    body["client_certificate"] = nullptr;
    body["client_key"] = nullptr;
  } else if (!c.client_certificate_file.empty() || !c.client_key_file.empty()) {
    if (c.client_certificate_file.empty() || c.client_key_file.empty()) {
      throw UsageError("--client-certificate and --client-key go together");
    }
    body["client_certificate"] = read_input(c.client_certificate_file);
    body["client_key"] = read_input(c.client_key_file);
  }
}

}  // namespace webhooks::cli
