// Exponential backoff, the one home of the toolkit's "wait, then twice as long" retries (the outbox
// relay's reschedule, the dispatcher's record and release retries, orders-api's partner client,
// SQLite's WAL switch). The publisher's delivery schedule is not one: it is a list of delays
// (publisher/retry_policy.h).
//
//   const Backoff backoff{.first = 500ms, .max = 5min, .jitter = 0.2};
//   std::chrono::milliseconds wait = backoff.delay(retry, &random);   // retry = 1, 2, 3, ...
#pragma once

#include <chrono>

#include "webhooks/random.h"

namespace webhooks {

struct Backoff {
  std::chrono::milliseconds first{100};                     // before the first retry, >= 0
  std::chrono::milliseconds max{std::chrono::seconds(30)};  // no wait is longer (before jitter)
  double factor = 2.0;                                      // each wait over the one before, >= 1
  double jitter = 0.0;  // 0..1: each wait times a uniform draw from [1 - jitter, 1 + jitter]

  // The wait before retry `retry` (1: the first retry; below 1 counts as 1), in milliseconds:
  // min(first * factor^(retry - 1), max), then times the jitter's draw from `random` (none when
  // jitter is 0 or random is null). Never negative, never overflows.
  std::chrono::milliseconds delay(int retry, RandomSource* random = nullptr) const;
};

}  // namespace webhooks
