// webhooks endpoint create / update / rotate: an endpoint, its delivery control and its signing
// keys through the publisher's admin API (POST /v1/endpoints, PATCH /v1/endpoints/{id},
// POST /v1/endpoints/{id}/rotate-secret). Prints the API's JSON answer, which holds the new
// "secret" (v1, both: shown this once) and "public_key" (v1a, both).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "publisher_api.h"

namespace webhooks::cli {
namespace {

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

struct EndpointArgs {
  Publisher publisher;
  std::string merchant, url, endpoint, signing, description;
  std::vector<std::string> event_types;
  std::optional<std::int64_t> grace_s;
  ControlArgs control;
};

// A secret read from a file (or "-": standard input), without its trailing line break.
std::string read_secret_file(const std::string& path) {
  std::string text = read_input(path);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

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
      if (used != c.rate_limit.size()) throw std::invalid_argument(c.rate_limit);
      body["rate_limit"] = n;
    } catch (const std::exception&) {
      throw UsageError("--rate-limit must be a whole number or none");
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
      const std::size_t colon = h.find(':');
      if (colon == std::string::npos || colon == 0) {
        throw UsageError("--header must be \"Name: value\", not \"" + h + "\"");
      }
      const std::size_t start = h.find_first_not_of(" \t", colon + 1);
      const std::string name = h.substr(0, colon);
      if (headers.contains(name)) throw UsageError("--header " + name + " is given twice");
      headers[name] = start == std::string::npos ? "" : h.substr(start);
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

CLI::Option* add_signing_option(CLI::App* cmd, EndpointArgs& a, const std::string& help) {
  return cmd->add_option("--signing", a.signing, help)->check(CLI::IsMember({"v1", "v1a", "both"}));
}

int print_answer(const std::optional<nlohmann::json>& answer) {
  if (!answer) return kFailed;
  std::cout << answer->dump(2) << "\n";
  return kOk;
}

int run_create(const EndpointArgs& a) {
  nlohmann::json body = {{"merchant_id", a.merchant}, {"url", a.url}};
  if (!a.event_types.empty()) body["event_types"] = a.event_types;
  if (!a.signing.empty()) body["signing"] = a.signing;
  if (!a.description.empty()) body["description"] = a.description;
  add_control_fields(a.control, body);
  return print_answer(call(a.publisher, "POST", "/v1/endpoints", body.dump()));
}

int run_update(const EndpointArgs& a) {
  nlohmann::json body = nlohmann::json::object();
  if (!a.url.empty()) body["url"] = a.url;
  if (!a.event_types.empty()) body["event_types"] = a.event_types;
  if (!a.description.empty()) body["description"] = a.description;
  add_control_fields(a.control, body);
  if (body.empty()) throw UsageError("nothing to change: give at least one field to update");
  return print_answer(call(a.publisher, "PATCH", "/v1/endpoints/" + a.endpoint, body.dump()));
}

int run_rotate(const EndpointArgs& a) {
  nlohmann::json body = nlohmann::json::object();
  if (!a.signing.empty()) body["signing"] = a.signing;
  if (a.grace_s) body["grace_seconds"] = *a.grace_s;
  return print_answer(
      call(a.publisher, "POST", "/v1/endpoints/" + a.endpoint + "/rotate-secret", body.dump()));
}

}  // namespace

void add_endpoint(CLI::App& app, Action& action) {
  CLI::App* endpoint = app.add_subcommand(
      "endpoint",
      "Create or update an endpoint, or rotate its signing keys, through the admin API");
  endpoint->require_subcommand(1);
  auto c = std::make_shared<EndpointArgs>();
  CLI::App* create = endpoint->add_subcommand(
      "create", "Create an endpoint; prints it with its new secret and/or public key");
  add_publisher_options(create, c->publisher);
  create->add_option("--merchant", c->merchant, "merchant_id")->required();
  create->add_option("--url", c->url, "where its deliveries go")->required();
  create->add_option("--event-type", c->event_types,
                     "an event type or prefix (order.*); repeatable");
  add_signing_option(create, *c,
                     "v1 (HMAC, a whsec_ secret; the default), v1a (Ed25519: prints the whpk_ "
                     "public key, never the signing key) or both");
  create->add_option("--description", c->description, "a note for operators");
  add_control_options(create, c->control, false);
  create->callback([c, &action] { action = [c] { return run_create(*c); }; });

  auto u = std::make_shared<EndpointArgs>();
  CLI::App* update = endpoint->add_subcommand(
      "update", "Change an endpoint's URL, filter, description or delivery control; prints it");
  add_publisher_options(update, u->publisher);
  update->add_option("--endpoint", u->endpoint, "endpoint id")->required();
  update->add_option("--url", u->url, "where its deliveries go");
  update->add_option("--event-type", u->event_types,
                     "an event type or prefix (order.*); repeatable (replaces the filter)");
  update->add_option("--description", u->description, "a note for operators");
  add_control_options(update, u->control, true);
  update->callback([u, &action] { action = [u] { return run_update(*u); }; });

  auto r = std::make_shared<EndpointArgs>();
  CLI::App* rotate = endpoint->add_subcommand(
      "rotate", "New signing keys for an endpoint; the old ones sign until the grace ends");
  add_publisher_options(rotate, r->publisher);
  rotate->add_option("--endpoint", r->endpoint, "endpoint id")->required();
  add_signing_option(rotate, *r, "v1, v1a or both (default: the endpoint's)");
  rotate
      ->add_option("--grace", r->grace_s,
                   "seconds the old keys keep signing (default: the daemon's --rotation-grace)")
      ->check(app::count(0, 315'360'000));
  rotate->callback([r, &action] { action = [r] { return run_rotate(*r); }; });
}

}  // namespace webhooks::cli
