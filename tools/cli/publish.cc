// webhooks publish: one event through the publisher's admin API (POST /v1/events with an
// Idempotency-Key), delivered to every endpoint of its merchant whose filter selects its type.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "output.h"
#include "publisher_api.h"
#include "webhooks/clock.h"
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

int run_publish(const PublishArgs& a) {
  const std::string data = read_event_data(a.data, a.data_file);
  const std::string key =
      a.idempotency_key.empty() ? UuidV7Generator(system_clock()).next() : a.idempotency_key;
  const auto answer =
      request(a.publisher, "POST", "/v1/events", ingest_body(a, data), {{"Idempotency-Key", key}});
  if (!answer) {
    std::cerr << "webhooks: the Idempotency-Key was " << key
              << " (publish again with --idempotency-key " << key
              << " and the same data: never a second event)\n";
    return kFailed;
  }
  nlohmann::ordered_json out = answer->body;
  out["idempotency_key"] = key;
  // A retry of a key the publisher already has: its first answer, nothing new queued.
  out["replayed"] = answer->headers.contains("Idempotent-Replayed");
  print_object(out, a.json);
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
  cmd->callback([a, &action] { action = [a] { return run_publish(*a); }; });
}

}  // namespace webhooks::cli
