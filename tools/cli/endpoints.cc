// webhooks endpoint create / rotate: an endpoint and its signing keys through the publisher's admin
// API (POST /v1/endpoints, POST /v1/endpoints/{id}/rotate-secret). Prints the API's JSON answer,
// which holds the new "secret" (v1, both: shown this once) and "public_key" (v1a, both).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "publisher_api.h"

namespace webhooks::cli {
namespace {

struct EndpointArgs {
  Publisher publisher;
  std::string merchant, url, endpoint, signing;
  std::vector<std::string> event_types;
  std::optional<std::int64_t> grace_s;
};

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
  return print_answer(call(a.publisher, "POST", "/v1/endpoints", body.dump()));
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
      "endpoint", "Create an endpoint, or rotate its signing keys, through the admin API");
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
  create->callback([c, &action] { action = [c] { return run_create(*c); }; });

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
