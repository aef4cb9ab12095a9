// webhooks endpoint list / show / create / update / enable / disable / delete / rotate: the
// publisher's endpoints through its admin API (GET, POST /v1/endpoints; GET, PATCH, DELETE
// /v1/endpoints/{id}; POST /v1/endpoints/{id}/enable, /disable, /rotate-secret). Each prints the
// answer as "name: value" lines (a table for list), or the API's JSON with --json; create and
// rotate print the new "secret" (v1, both) and "public_key" (v1a, both), the secret only then.
#include <httplib.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "admin/endpoint_control.h"
#include "admin/publisher_api.h"
#include "cli.h"
#include "output.h"
#include "webhooks/app/deprecated_flags.h"

namespace webhooks::cli {
namespace {

struct EndpointArgs {
  Publisher publisher;
  std::string merchant, url, endpoint, signing, description, secret, reason;
  std::vector<std::string> event_types;
  std::int64_t grace_s = 0;            // rotate --grace, when given
  const CLI::Option* grace = nullptr;  // without it, the daemon's --rotation-grace
  ControlArgs control;
  bool json = false;
};

// The endpoint id as the first argument (`webhooks endpoint show ep_1`) or --endpoint ID (the
// spelling before the first argument was taken).
void add_endpoint_id(CLI::App* cmd, EndpointArgs& a) {
  cmd->add_option("id,--endpoint", a.endpoint, "the endpoint's id (or --endpoint ID)");
}

void add_json_flag(CLI::App* cmd, EndpointArgs& a, bool table = false) {
  cmd->add_flag("--json", a.json,
                table ? "print the API's JSON instead of a table"
                      : "print the API's JSON instead of name: value lines");
}

CLI::Option* add_signing_option(CLI::App* cmd, EndpointArgs& a, const std::string& help) {
  return cmd->add_option("--signing", a.signing, help)->check(CLI::IsMember({"v1", "v1a", "both"}));
}

// Prints the answer, and each of its "warnings" (e.g. a URL host that does not resolve yet) on
// stderr as "webhooks: warning: ...".
int print_answer(const EndpointArgs& a, const std::optional<nlohmann::ordered_json>& answer) {
  if (!answer) return kFailed;
  print_object(*answer, a.json);
  if (const auto warnings = answer->find("warnings");
      warnings != answer->end() && warnings->is_array()) {
    for (const nlohmann::ordered_json& warning : *warnings) {
      if (warning.is_string()) {
        std::cerr << "webhooks: warning: " << warning.get<std::string>() << "\n";
      }
    }
  }
  if (!a.json && answer->contains("secret")) {
    std::cout << "(the secret is shown only now: store it where the receiver reads it)\n";
  }
  return kOk;
}

// Throws UsageError when no endpoint id was given (or an empty one).
std::string endpoint_path(const EndpointArgs& a, const std::string& tail = "") {
  if (a.endpoint.empty()) {
    throw UsageError(
        "give the endpoint's id: webhooks endpoint COMMAND ID (webhooks endpoint list "
        "shows them)");
  }
  return "/v1/endpoints/" + httplib::detail::encode_query_param(a.endpoint) + tail;
}

int run_list(const EndpointArgs& a) {
  std::string path = "/v1/endpoints";
  if (!a.merchant.empty()) {
    path += "?merchant_id=" + httplib::detail::encode_query_param(a.merchant);
  }
  const auto res = call(a.publisher, "GET", path);
  if (!res) return kFailed;
  print_list(*res, "endpoints",
             {"id", "merchant_id", "url", "event_types", "enabled", "failing_since"}, a.json);
  return kOk;
}

int run_create(const EndpointArgs& a) {
  nlohmann::json body = {{"merchant_id", a.merchant}, {"url", a.url}};
  if (!a.event_types.empty()) body["event_types"] = a.event_types;
  if (!a.signing.empty()) body["signing"] = a.signing;
  if (!a.secret.empty()) body["secret"] = a.secret;
  if (!a.description.empty()) body["description"] = a.description;
  add_control_fields(a.control, body);
  return print_answer(a, call(a.publisher, "POST", "/v1/endpoints", body.dump()));
}

int run_update(const EndpointArgs& a) {
  nlohmann::json body = nlohmann::json::object();
  if (!a.url.empty()) body["url"] = a.url;
  if (!a.event_types.empty()) body["event_types"] = a.event_types;
  if (!a.description.empty()) body["description"] = a.description;
  add_control_fields(a.control, body);
  if (body.empty()) throw UsageError("nothing to change: give at least one field to update");
  return print_answer(a, call(a.publisher, "PATCH", endpoint_path(a), body.dump()));
}

int run_set_enabled(const EndpointArgs& a, bool enable) {
  nlohmann::json body = nlohmann::json::object();
  if (!a.reason.empty()) body["reason"] = a.reason;
  return print_answer(
      a, call(a.publisher, "POST", endpoint_path(a, enable ? "/enable" : "/disable"), body.dump()));
}

int run_delete(const EndpointArgs& a) {
  if (!call(a.publisher, "DELETE", endpoint_path(a))) return kFailed;
  if (a.json) {
    std::cout << nlohmann::json{{"id", a.endpoint}, {"deleted", true}}.dump(2) << "\n";
  } else {
    std::cout << "deleted endpoint " << a.endpoint << "\n";
  }
  return kOk;
}

int run_rotate(const EndpointArgs& a) {
  nlohmann::json body = nlohmann::json::object();
  if (!a.signing.empty()) body["signing"] = a.signing;
  if (a.grace != nullptr && a.grace->count() > 0) body["grace_seconds"] = a.grace_s;
  return print_answer(a,
                      call(a.publisher, "POST", endpoint_path(a, "/rotate-secret"), body.dump()));
}

// A subcommand of `endpoint` with the publisher's flags and --json; `run` is its action.
CLI::App* add_command(CLI::App* endpoint, Action& action, const std::string& name,
                      const std::string& help, std::function<int(const EndpointArgs&)> run,
                      std::shared_ptr<EndpointArgs>& args) {
  args = std::make_shared<EndpointArgs>();
  CLI::App* cmd = endpoint->add_subcommand(name, help);
  add_publisher_options(cmd, args->publisher);
  add_json_flag(cmd, *args, name == "list");
  cmd->callback([args, run, &action] { action = [args, run] { return run(*args); }; });
  return cmd;
}

}  // namespace

void add_endpoint(CLI::App& app, Action& action) {
  CLI::App* endpoint = app.add_subcommand(
      "endpoint",
      "List, show, create, update, enable, disable or delete endpoints, or rotate their signing "
      "keys, through the admin API");
  endpoint->require_subcommand(1);
  std::shared_ptr<EndpointArgs> a;

  CLI::App* list =
      add_command(endpoint, action, "list", "List the endpoints, or a merchant's", run_list, a);
  list->add_option("--merchant", a->merchant, "only this merchant_id");

  // add_command() points `a` at the new command's arguments: each add_endpoint_id() follows it.
  CLI::App* show = add_command(
      endpoint, action, "show",
      "Show an endpoint: its URL, filter, state, delivery control and keys (never a signing secret "
      "or an --auth credential; static headers are shown)",
      [](const EndpointArgs& args) {
        return print_answer(args, call(args.publisher, "GET", endpoint_path(args)));
      },
      a);
  add_endpoint_id(show, *a);

  CLI::App* create = add_command(
      endpoint, action, "create",
      "Create an endpoint; prints it with its secret and/or public key (the secret only now)",
      run_create, a);
  create->add_option("--merchant", a->merchant, "merchant_id")->required();
  create->add_option("--url", a->url, "where its deliveries go")->required();
  create->add_option("--event-type", a->event_types,
                     "an event type or prefix (order.*); repeatable (default: every type)");
  add_signing_option(create, *a,
                     "v1 (HMAC, a whsec_ secret; the default), v1a (Ed25519: prints the whpk_ "
                     "public key, never the signing key) or both");
  app::add_secret_option(
      *create,
      {"--secret", "WEBHOOKS_ENDPOINT_SECRET",
       "the endpoint's whsec_… secret (default: a new one, printed once)", app::signing_secret()},
      a->secret);
  create->add_option("--description", a->description, "a note for operators");
  add_control_options(create, a->control, false);

  CLI::App* update =
      add_command(endpoint, action, "update",
                  "Change an endpoint's URL, filter, description or delivery control; prints it",
                  run_update, a);
  add_endpoint_id(update, *a);
  update->add_option("--url", a->url, "where its deliveries go");
  update->add_option("--event-type", a->event_types,
                     "an event type or prefix (order.*); repeatable (replaces the filter)");
  update->add_option("--description", a->description, "a note for operators");
  add_control_options(update, a->control, true);

  CLI::App* enable = add_command(
      endpoint, action, "enable", "Enable an endpoint: its parked tasks are delivered again",
      [](const EndpointArgs& args) { return run_set_enabled(args, true); }, a);
  add_endpoint_id(enable, *a);
  CLI::App* disable = add_command(
      endpoint, action, "disable",
      "Disable an endpoint: nothing is delivered to it; new events get no task for it",
      [](const EndpointArgs& args) { return run_set_enabled(args, false); }, a);
  add_endpoint_id(disable, *a);
  disable->add_option("--reason", a->reason,
                      "why, shown on the console (default: \"disabled by an operator\")");

  CLI::App* remove = add_command(
      endpoint, action, "delete",
      "Delete an endpoint: its pending tasks end dead; events and attempts stay", run_delete, a);
  add_endpoint_id(remove, *a);

  CLI::App* rotate = add_command(
      endpoint, action, "rotate",
      "New signing keys for an endpoint; the old ones sign until the grace ends", run_rotate, a);
  add_endpoint_id(rotate, *a);
  add_signing_option(rotate, *a, "v1, v1a or both (default: the endpoint's)");
  CLI::Option* grace = app::add_whole_seconds(
      *rotate, "--grace", a->grace_s,
      "how long the old keys keep signing, e.g. 24h, 30m, 0s (whole seconds; "
      "default: the daemon's --rotation-grace)",
      app::Zero::allowed);
  grace->default_str("");
  a->grace = grace;
}

}  // namespace webhooks::cli
