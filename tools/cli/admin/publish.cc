// webhooks publish: one event through the publisher's admin API (POST /v1/events with an
// Idempotency-Key), delivered to every endpoint of its merchant whose filter selects its type.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "admin/publisher_api.h"
#include "cli.h"
#include "output.h"
#include "webhooks/clock.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/uuid.h"

namespace webhooks::cli {
namespace {

struct PublishArgs {
  Publisher publisher;
  std::string merchant, type, data, data_file, idempotency_key, ordering_key;
  bool json = false;
};

// The ingest body, `data` (compact JSON) spliced in as it is so that its number tokens reach the
// publisher byte for byte.
std::string ingest_body(const PublishArgs& a, const std::string& data) {
  std::string body = "{\"merchant_id\":" + nlohmann::json(a.merchant).dump() +
                     ",\"type\":" + nlohmann::json(a.type).dump() + ",\"data\":" + data;
  if (!a.ordering_key.empty()) {
    body += ",\"ordering_key\":" + nlohmann::json(a.ordering_key).dump();
  }
  return body + "}";
}

// The key the publisher stores for `flag` (idempotency::parse_idempotency_key, the guard's own
// reading: a structured-field string is unquoted), so that what is printed is what is stored.
// Throws UsageError unless it is 1 to 255 printable ASCII characters.
std::string idempotency_key_of(const std::string& flag) {
  idempotency::KeyCheck check = idempotency::parse_idempotency_key(flag);
  if (check.status != idempotency::KeyCheck::Status::ok) {
    throw UsageError("--idempotency-key must be 1 to 255 printable ASCII characters");
  }
  return std::move(check.key);
}

// Throws UsageError unless `key` is an ordering key the publisher takes: 1 to 255 bytes without
// control characters.
void check_ordering_key(const std::string& key) {
  if (key.empty() || key.size() > 255 || std::any_of(key.begin(), key.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      })) {
    throw UsageError("--ordering-key must be 1 to 255 bytes without control characters");
  }
}

int run_publish(const PublishArgs& a, const CLI::App& cmd) {
  const std::string key = cmd.count("--idempotency-key") > 0
                              ? idempotency_key_of(a.idempotency_key)
                              : UuidV7Generator(system_clock()).next();
  if (cmd.count("--ordering-key") > 0) check_ordering_key(a.ordering_key);
  const std::string data = read_event_data(a.data, a.data_file);
  const ApiAnswer answer =
      request(a.publisher, "POST", "/v1/events", ingest_body(a, data), {{"Idempotency-Key", key}});
  if (!answer.ok()) {
    // Whether the event was accepted is unknown (no answer, 5xx) or not yet settled (409): the
    // same key and data again give it once. Another refusal would be refused again.
    if (answer.status == 0 || answer.status == 409 || answer.status >= 500) {
      std::cerr << "webhooks: to retry without a second event, publish the same data again with "
                   "--idempotency-key "
                << key << "\n";
    }
    return kFailed;
  }
  nlohmann::ordered_json out = answer.body;
  out["idempotency_key"] = key;
  // A retry of a key the publisher already has: its first answer, nothing new queued.
  out["replayed"] = answer.headers.contains("Idempotent-Replayed");
  print_object(out, a.json);
  if (out.value("tasks", -1) == 0) {
    std::cerr << "webhooks: no enabled endpoint of merchant " << printable(a.merchant) << " takes "
              << printable(a.type)
              << " events: nothing will be delivered (webhooks endpoint list --merchant "
              << printable(a.merchant) << ")\n";
  }
  return kOk;
}

}  // namespace

void add_publish(CLI::App& app, Action& action) {
  auto a = std::make_shared<PublishArgs>();
  CLI::App* cmd = app.add_subcommand(
      "publish",
      "Publish an event through the publisher: it signs and delivers it to the merchant's "
      "endpoints; prints the event id, the idempotency key and the number of tasks");
  add_publisher_options(cmd, a->publisher);
  cmd->add_option("--merchant", a->merchant, "merchant_id")->required();
  cmd->add_option("--type", a->type, "event type, e.g. order.created")->required();
  cmd->add_option("--data", a->data, "the event's data: a JSON object, or @FILE");
  cmd->add_option("--data-file", a->data_file, "file (or -) holding the event's data");
  cmd->add_option("--idempotency-key", a->idempotency_key,
                  "the Idempotency-Key (default: a new UUIDv7, printed): the same key and data "
                  "again give the same event, never a second one");
  cmd->add_option("--ordering-key", a->ordering_key,
                  "orders the event on FIFO endpoints behind earlier events with this key");
  cmd->add_flag("--json", a->json, "print the answer as JSON");
  cmd->callback([a, cmd, &action] { action = [a, cmd] { return run_publish(*a, *cmd); }; });
}

}  // namespace webhooks::cli
