// Helpers for the receiver's tests: signed headers and a receiver on the test engine with a fake
// clock.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_env.h"
#include "webhooks/clock.h"
#include "webhooks/receiver/receiver.h"
#include "webhooks/secret.h"
#include "webhooks/signer.h"

namespace receiver_test {

using namespace webhooks;
using namespace webhooks::receiver;

inline constexpr std::int64_t kNow = 1'700'000'000;  // Unix seconds on the fake clock
inline const std::string kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
inline const std::string kOtherSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";

inline std::string sign(const std::string& secret, const std::string& id, std::int64_t ts,
                        const std::string& body) {
  return Signer(Secret::parse(secret)).sign(id, ts, body);
}

// The three signed headers plus a delivery id, signed with `secret`.
inline Headers signed_headers(const std::string& id, const std::string& body,
                              std::int64_t ts = kNow, const std::string& secret = kSecret,
                              const std::string& delivery_id = "d1") {
  return Headers{{"webhook-id", id},
                 {"webhook-timestamp", std::to_string(ts)},
                 {"webhook-signature", sign(secret, id, ts, body)},
                 {"webhook-delivery-id", delivery_id}};
}

inline std::string event_body(const std::string& id, const std::string& type = "order.captured") {
  return nlohmann::json{{"id", id},
                        {"type", type},
                        {"timestamp", "2023-11-14T22:13:20Z"},
                        {"data", {{"amount", 1000}}}}
      .dump();
}

inline Config test_config(const Clock& clock, const std::string& consumer = "shop") {
  Config config;
  config.secrets = {kSecret};
  config.consumer = consumer;
  config.clock = &clock;
  config.maintenance_interval = std::chrono::milliseconds(0);
  return config;
}

inline std::string error_code(const Answer& answer) {
  const auto body = nlohmann::json::parse(answer.body, nullptr, false);
  if (!body.is_object() || !body.contains("error")) return "";
  return body["error"]["code"].get<std::string>();
}

inline std::string header(const Answer& answer, const std::string& name) {
  for (const auto& [n, v] : answer.headers) {
    if (n == name) return v;
  }
  return "";
}

inline Reply ok(const Event&) { return Reply{}; }

}  // namespace receiver_test
