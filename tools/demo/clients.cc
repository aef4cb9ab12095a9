#include "clients.h"

#include <chrono>
#include <sstream>

#include "failure.h"

namespace webhooks::demo {

using nlohmann::json;

std::unique_ptr<httplib::Client> client_for(int port, const std::string& token) {
  auto c = std::make_unique<httplib::Client>(kHost, port);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  c->set_connection_timeout(std::chrono::seconds(5));
  c->set_read_timeout(std::chrono::seconds(20));
  if (!token.empty()) c->set_bearer_token_auth(token);
  return c;
}

json get_json(httplib::Client& client, const std::string& what, const std::string& path) {
  auto res = client.Get(path);
  if (!res) throw Failure(what + " GET " + path + ": " + httplib::to_string(res.error()));
  if (res->status != 200) {
    throw Failure(what + " GET " + path + " answered " + std::to_string(res->status) + ": " +
                  res->body);
  }
  json doc = json::parse(res->body, nullptr, false);
  if (doc.is_discarded()) throw Failure(what + " GET " + path + " answered invalid JSON");
  return doc;
}

std::map<std::string, double> parse_metrics(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    try {
      out[line.substr(0, space)] = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
    }
  }
  return out;
}

long metric(const std::map<std::string, double>& m, const std::string& name) {
  const auto it = m.find(name);
  return it == m.end() ? 0 : static_cast<long>(it->second);
}

std::map<std::string, double> publisher_metrics(httplib::Client& publisher) {
  const auto res = publisher.Get("/metrics");
  if (!res || res->status != 200) throw Failure("GET /metrics of the publisher failed");
  return parse_metrics(res->body);
}

bool ours(const std::string& type) {
  return type.starts_with("order.") || type.starts_with("payout.");
}

}  // namespace webhooks::demo
