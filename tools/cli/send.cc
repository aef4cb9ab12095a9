// webhooks send: one signed delivery, with new UUIDv7 ids unless --id gives the event's.
#include <httplib.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "output.h"
#include "signing/signing_flags.h"
#include "webhooks/app/deprecated_flags.h"
#include "webhooks/clock.h"
#include "webhooks/rfc3339.h"
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
  std::string url, type, data, data_file, id;
  SigningKeys keys;
  std::optional<std::int64_t> timestamp;  // Unix seconds
  std::vector<std::string> headers;       // "Name: value"
  std::int64_t timeout_ms = 10'000;
};

// The delivered body: {"id":…,"type":…,"timestamp":"RFC 3339","data":…}.
std::string event_body(const std::string& event_id, const std::string& type, UnixMillis at,
                       const std::string& data) {
  return "{\"id\":" + nlohmann::json(event_id).dump() + ",\"type\":" +
         nlohmann::json(type).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         ",\"timestamp\":\"" + format_rfc3339(at) + "\",\"data\":" + data + "}";
}

// The request's headers: the signed ones, then each --header, which replaces a header of ours with
// its name (webhook-delivery-id, webhook-event-type, User-Agent). Throws UsageError for a name
// that --id, --timestamp, the signing flags or the request's framing own.
httplib::Headers request_headers(const SendArgs& args, httplib::Headers ours) {
  for (const std::string& flag : args.headers) {
    auto [name, value] = parse_header_flag(flag);
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == kHeaderId || lower == kHeaderTimestamp || lower == kHeaderSignature) {
      throw UsageError("--header " + name +
                       ": send sets it (use --id, --timestamp, --secret or --signing-key)");
    }
    if (lower == "host" || lower == "content-length" || lower == "content-type" ||
        lower == "transfer-encoding" || lower == "connection") {
      throw UsageError("--header " + name + ": send sets it for the request's framing");
    }
    ours.erase(name);  // httplib::Headers compares names case-insensitively
    ours.emplace(std::move(name), std::move(value));
  }
  return ours;
}

// The Unix milliseconds in the time field of a UUIDv7 `id` (RFC 9562, section 5.7), or
// std::nullopt for another id.
std::optional<UnixMillis> uuid_v7_time(const std::string& id) {
  if (!is_uuid_v7(id)) return std::nullopt;
  const std::string hex = id.substr(0, 8) + id.substr(9, 4);  // the first 48 bits
  return static_cast<UnixMillis>(std::stoll(hex, nullptr, 16));
}

// Prints the answer (event id, status, body); exit 0 on 2xx, 1 otherwise or without an answer.
int report_answer(const httplib::Result& res, const std::string& url, const std::string& event_id,
                  std::chrono::milliseconds timeout) {
  if (!res) {
    std::cerr << "webhooks send: no answer from " << url << ": " << no_answer(res.error(), timeout)
              << "\n";
    return kFailed;
  }
  std::cout << "event_id: " << event_id << "\nstatus: " << res->status << "\n" << res->body;
  if (!res->body.empty() && res->body.back() != '\n') std::cout << "\n";
  return res->status >= 200 && res->status < 300 ? kOk : kFailed;
}

int run_send(const SendArgs& args, const CLI::App& cmd) {
  require_key(args.keys, "send");
  if (cmd.count("--id") > 0 && !is_valid_webhook_id(args.id)) {
    throw UsageError("--id must be 1 to 255 printable ASCII characters without spaces");
  }
  const std::string data = read_event_data(args.data, args.data_file);
  const auto [base, path] = split_url(args.url);
  UuidV7Generator ids(system_clock());
  const std::string event_id = args.id.empty() ? ids.next() : args.id;
  const std::int64_t ts = args.timestamp ? *args.timestamp : system_clock().now_seconds();
  // The event's time is its UUIDv7 id's, so that the same id sent again is the same body (the
  // receiver's duplicate, where another body is 422); another id's is the webhook-timestamp.
  const UnixMillis at = uuid_v7_time(event_id).value_or(ts * 1000);
  const std::string body = event_body(event_id, args.type, at, data);
  const httplib::Headers headers = request_headers(
      args,
      {{std::string(kHeaderId), event_id},
       {std::string(kHeaderTimestamp), std::to_string(ts)},
       {std::string(kHeaderSignature), signature_value(args.keys, "send", event_id, ts, body)},
       {std::string(kHeaderDeliveryId), ids.next()},
       {std::string(kHeaderEventType), args.type},
       {"User-Agent", "webhooks-cli/" + std::string(kVersion)}});
  httplib::Client client(base);
  client.set_connection_timeout(std::chrono::milliseconds(args.timeout_ms));
  client.set_read_timeout(std::chrono::milliseconds(args.timeout_ms));
  client.set_tcp_nodelay(true);
  return report_answer(client.Post(path, headers, body, "application/json"), args.url, event_id,
                       std::chrono::milliseconds(args.timeout_ms));
}

}  // namespace

void add_send(CLI::App& app, Action& action) {
  auto args = std::make_shared<SendArgs>();
  CLI::App* cmd = app.add_subcommand(
      "send", "POST one signed delivery straight to a URL (no publisher); print the answer");
  cmd->add_option("--url", args->url, "the endpoint, e.g. http://127.0.0.1:8783/webhooks")
      ->required();
  add_signing_flags(*cmd, args->keys);
  cmd->add_option("--type", args->type, "event type, e.g. order.created")->required();
  cmd->add_option("--data", args->data, "the event's data: a JSON object, or @FILE");
  cmd->add_option("--data-file", args->data_file, "file (or -) holding the event's data");
  cmd->add_option("--id", args->id,
                  "the event id (webhook-id and the body's \"id\"; default: a new UUIDv7). A "
                  "UUIDv7 sent again with the same --type and --data is the same body: the "
                  "receiver's duplicate");
  cmd->add_option("--timestamp", args->timestamp,
                  "webhook-timestamp, Unix seconds (default: now); an old one shows the "
                  "receiver's tolerance. The body's \"timestamp\" is the UUIDv7 id's time, or "
                  "this")
      ->check(app::unix_seconds(9'999'999'999));  // webhook-timestamp: at most 10 digits
  cmd->add_option("--header", args->headers,
                  "an extra header, \"Name: value\"; repeatable (replaces webhook-delivery-id, "
                  "webhook-event-type or User-Agent of the same name)");
  CLI::Option* timeout = app::add_duration(*cmd, "--timeout", args->timeout_ms,
                                           app::StoreAs::milliseconds, "connect and read timeout");
  app::add_deprecated_alias(*cmd, timeout, "--timeout-ms", app::OldValue::milliseconds);
  cmd->callback([args, cmd, &action] { action = [args, cmd] { return run_send(*args, *cmd); }; });
}

}  // namespace webhooks::cli
