// The publisher's durations (`--retry-schedule 5s,5m,30m`, `--max-age 3d`): the toolkit's one
// duration grammar, webhooks/duration.h, under the names the publisher has always used.
#pragma once

#include "webhooks/duration.h"

namespace webhooks::publisher {

using webhooks::format_duration;
using webhooks::kMaxDuration;
using webhooks::parse_duration;

}  // namespace webhooks::publisher
