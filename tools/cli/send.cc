// webhooks send: one signed delivery with new UUIDv7 ids.
#include <httplib.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "webhooks/clock.h"
#include "webhooks/error.h"
#include "webhooks/json_compact.h"
#include "webhooks/rfc3339.h"
#include "webhooks/signer.h"
#include "webhooks/uuid.h"
#include "webhooks/version.h"
#include "webhooks/wire.h"

namespace webhooks::cli {
namespace {

// "http://host:port/path" -> ("http://host:port", "/path"). Throws UsageError.
std::pair<std::string, std::string> split_url(const std::string& url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos ||
      (url.compare(0, scheme, "http") != 0 && url.compare(0, scheme, "https") != 0)) {
    throw UsageError("--url must start with http:// or https://");
  }
  const std::size_t slash = url.find('/', scheme + 3);
  if (slash == std::string::npos) return {url, "/"};
  return {url.substr(0, slash), url.substr(slash)};
}

struct SendArgs {
  std::string url, secret, type, data;
  std::int64_t timeout_ms = 10'000;
};

// --data (a JSON object, or @FILE) compact with its number tokens as written; one level less
// than the limit, since the delivered body wraps it. Throws UsageError.
std::string read_data(const std::string& flag) {
  const std::string text = flag.starts_with("@") ? read_input(flag.substr(1)) : flag;
  std::string data;
  try {
    data = compact_json(text, kMaxJsonDepth - 1);
  } catch (const Error& e) {
    throw UsageError(std::string("--data is not JSON: ") + e.what());
  }
  if (!data.starts_with('{')) throw UsageError("--data must be a JSON object");
  return data;
}

// The delivered body: {"id":…,"type":…,"timestamp":"RFC 3339","data":…}.
std::string event_body(const std::string& event_id, const std::string& type, UnixMillis now,
                       const std::string& data) {
  return "{\"id\":" + nlohmann::json(event_id).dump() + ",\"type\":" +
         nlohmann::json(type).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         ",\"timestamp\":\"" + format_rfc3339(now) + "\",\"data\":" + data + "}";
}

// Prints the answer (event id, status, body); exit 0 on 2xx, 1 otherwise or without an answer.
int report_answer(const httplib::Result& res, const std::string& url, const std::string& event_id) {
  if (!res) {
    std::cerr << "webhooks send: no answer from " << url << ": " << httplib::to_string(res.error())
              << "\n";
    return kFailed;
  }
  std::cout << "event_id: " << event_id << "\nstatus: " << res->status << "\n" << res->body;
  if (!res->body.empty() && res->body.back() != '\n') std::cout << "\n";
  return res->status >= 200 && res->status < 300 ? kOk : kFailed;
}

int run_send(const SendArgs& args) {
  const Secret secret = Secret::parse(args.secret);
  const std::string data = read_data(args.data);
  const auto [base, path] = split_url(args.url);
  UuidV7Generator ids(system_clock());
  const std::string event_id = ids.next();
  const UnixMillis now = system_clock().now_ms();
  const std::string body = event_body(event_id, args.type, now, data);
  const std::int64_t ts = now / 1000;
  const httplib::Headers headers = {
      {std::string(kHeaderId), event_id},
      {std::string(kHeaderTimestamp), std::to_string(ts)},
      {std::string(kHeaderSignature), Signer(secret).sign(event_id, ts, body)},
      {std::string(kHeaderDeliveryId), ids.next()},
      {std::string(kHeaderEventType), args.type},
      {"User-Agent", "webhooks-cli/" + std::string(kVersion)}};
  httplib::Client client(base);
  client.set_connection_timeout(std::chrono::milliseconds(args.timeout_ms));
  client.set_read_timeout(std::chrono::milliseconds(args.timeout_ms));
  client.set_tcp_nodelay(true);
  return report_answer(client.Post(path, headers, body, "application/json"), args.url, event_id);
}

}  // namespace

void add_send(CLI::App& app, Action& action) {
  auto args = std::make_shared<SendArgs>();
  CLI::App* cmd = app.add_subcommand("send", "POST one signed delivery; print the answer");
  cmd->add_option("--url", args->url, "the endpoint, e.g. http://127.0.0.1:8783/webhooks")
      ->required();
  app::add_secret_option(
      *cmd, {"--secret", "WEBHOOKS_SECRET", "whsec_… secret", app::signing_secret(), true},
      args->secret);
  cmd->add_option("--type", args->type, "event type, e.g. order.created")->required();
  cmd->add_option("--data", args->data, "the event's data: a JSON object, or @FILE")->required();
  cmd->add_option("--timeout-ms", args->timeout_ms, "connect and read timeout, milliseconds")
      ->check(app::duration(app::DurationUnit::milliseconds))
      ->capture_default_str();
  cmd->callback([args, &action] { action = [args] { return run_send(*args); }; });
}

}  // namespace webhooks::cli
