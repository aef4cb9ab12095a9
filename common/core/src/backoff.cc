#include "webhooks/backoff.h"

#include <algorithm>
#include <cmath>

namespace webhooks {

std::chrono::milliseconds Backoff::delay(int retry, RandomSource* random) const {
  // factor^62 is past any max in milliseconds, so the exponent is bounded before pow.
  const int exponent = std::clamp(retry - 1, 0, 62);
  const double grown = static_cast<double>(first.count()) * std::pow(factor, exponent);
  double wait = std::min(grown, static_cast<double>(max.count()));
  if (random != nullptr && jitter > 0) wait *= 1.0 - jitter + 2.0 * jitter * random->next_unit();
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::max(0.0, wait)));
}

}  // namespace webhooks
