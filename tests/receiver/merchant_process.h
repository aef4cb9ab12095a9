// merchant-receiver (examples/merchant_receiver) as a process in the receiver's tests: its
// arguments and what its GET /handled lists.
#pragma once

#include <httplib.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/test_env.h"
#include "webhooks/launcher/child_process.h"

namespace receiver_test {

// On 127.0.0.1 (a free port) with the database `db`, then `args`.
inline std::vector<std::string> merchant_args(const std::string& db,
                                              std::vector<std::string> args) {
  args.insert(args.begin(), {"--listen", "127.0.0.1:0", "--db", db});
  return args;
}

// merchant-receiver with `args` on a database and in a directory of its own, both named `name`;
// started and listening.
struct MerchantProcess {
  MerchantProcess(const std::string& name, std::vector<std::string> args)
      : MerchantProcess(name, webhooks::test::database_target(name), std::move(args)) {}
  // On the database `db` (a database_target made beforehand).
  MerchantProcess(const std::string& name, const std::string& db, std::vector<std::string> args)
      : dir(webhooks::test::temp_dir(name)),
        process("merchant-receiver", merchant_args(db, std::move(args)), dir),
        port(process.wait_listening()) {}

  std::string dir;
  webhooks::launcher::ChildProcess process;
  int port;
};

// Its GET /handled (the events its handler ran for, with counts) as JSON; REQUIREs an answer.
inline nlohmann::json handled_events(httplib::Client& client) {
  const auto handled = client.Get("/handled");
  REQUIRE(handled);
  return nlohmann::json::parse(handled->body);
}

// What GET /handled lists after the one event `id` of `type`: its handler run `calls` times,
// `effects` of them kept.
inline nlohmann::json handled_one(const std::string& id, const std::string& type, int calls,
                                  int effects) {
  return {{"events",
           nlohmann::json::array(
               {{{"event_id", id}, {"type", type}, {"calls", calls}, {"effects", effects}}})}};
}

}  // namespace receiver_test
