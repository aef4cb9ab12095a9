// How the demo ends early: a Failure (what went wrong and where to look) or an interruption.
#pragma once

#include <chrono>
#include <stdexcept>

namespace webhooks::demo {

using Clock = std::chrono::steady_clock;

// A failure that ends the demo; its message says what went wrong and where to look.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// SIGINT or SIGTERM arrived: stop the servers and exit 130.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

}  // namespace webhooks::demo
