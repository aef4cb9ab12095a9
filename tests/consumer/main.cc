// An application embedding the receiver from an installed webhooks (find_package(webhooks),
// webhooks::receiver): a Receiver on a SQLite file in a fresh temporary directory, one delivery
// signed with the toolkit's Signer and handled, then the same delivery again. Exit 0 only when
// the handler ran once and the second delivery was answered as a duplicate (200, Idempotent-
// Replayed: true, the first answer's body); 1 otherwise. The library's log lines go through the
// application's own logger (webhooks::set_logger), here on stderr with a "[consumer]" prefix.
#include <spdlog/sinks/stdout_sinks.h>
#include <stdlib.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>

#include "webhooks/log.h"
#include "webhooks/receiver/receiver.h"
#include "webhooks/secret.h"
#include "webhooks/signer.h"

namespace {

using webhooks::receiver::Answer;

std::string header(const Answer& answer, const std::string& name) {
  for (const auto& [n, v] : answer.headers) {
    if (n == name) return v;
  }
  return "";
}

int check(const std::string& dir) {
  const webhooks::Secret secret = webhooks::Secret::generate();
  webhooks::receiver::Config config;
  config.secrets = {secret.to_string()};
  config.consumer = "consumer-check";
  config.store = dir + "/receiver.db";
  webhooks::receiver::Receiver receiver(config);

  const std::string id = "msg_consumer_1";
  const std::string body = R"({"type":"order.captured","data":{"order_id":"o_1"}})";
  const std::int64_t timestamp = std::time(nullptr);
  const webhooks::receiver::Headers headers{
      {"webhook-id", id},
      {"webhook-timestamp", std::to_string(timestamp)},
      {"webhook-signature", webhooks::Signer(secret).sign(id, timestamp, body)}};
  int runs = 0;
  const webhooks::receiver::Handler handler = [&](const webhooks::receiver::Event& event) {
    ++runs;
    return webhooks::receiver::Reply{200, R"({"order":")" + std::string(event.id) + "\"}"};
  };
  const Answer first = receiver.handle(headers, body, handler);
  const Answer second = receiver.handle(headers, body, handler);
  std::printf("first: %d %s\nsecond: %d %s (Idempotent-Replayed: %s)\nhandler runs: %d\n",
              first.status, first.body.c_str(), second.status, second.body.c_str(),
              header(second, "Idempotent-Replayed").c_str(), runs);
  const bool ok = first.status == 200 && runs == 1 && second.status == 200 &&
                  header(second, "Idempotent-Replayed") == "true" && second.body == first.body;
  std::printf("%s\n", ok ? "ok: handled once, the duplicate answered as a duplicate" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  auto logger = std::make_shared<spdlog::logger>("webhooks",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern("[consumer] %v");
  webhooks::set_logger(logger);

  char dir_template[] = "/tmp/webhooks-consumer-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  int code = 1;
  try {
    code = check(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "webhooks-consumer: %s\n", e.what());
  }
  std::filesystem::remove_all(dir);
  return code;
}
