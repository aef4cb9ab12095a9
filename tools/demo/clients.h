// The demo's HTTP clients of the servers it started on 127.0.0.1, and reading their answers: JSON
// documents and the publisher's Prometheus metrics.
#pragma once

#include <httplib.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace webhooks::demo {

constexpr const char* kHost = "127.0.0.1";
// The publisher's counter of delivery attempts that succeeded.
constexpr const char* kSucceededAttempts = "webhooks_attempts_total{outcome=\"succeeded\"}";

// A keep-alive client of kHost:port (connect timeout 5 s, read timeout 20 s), with a bearer
// token when `token` is not empty.
std::unique_ptr<httplib::Client> client_for(int port, const std::string& token = "");

// GET `path` as a JSON document; throws Failure, naming `what` (the server), unless it answers
// 200 with valid JSON.
nlohmann::json get_json(httplib::Client& client, const std::string& what, const std::string& path);

// Prometheus text: "name{labels} value" lines; `# ...` lines skipped.
std::map<std::string, double> parse_metrics(const std::string& text);
// The value of `name` (with its labels) as a whole number, 0 when absent.
long metric(const std::map<std::string, double>& m, const std::string& name);
// The publisher's GET /metrics, parsed; throws Failure when it does not answer 200.
std::map<std::string, double> publisher_metrics(httplib::Client& publisher);

// True for the event types the demo's load causes (order.*, payout.*).
bool ours(const std::string& type);

}  // namespace webhooks::demo
