#include "webhooks/clock.h"

namespace webhooks {

UnixMillis SystemClock::now_ms() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Clock& system_clock() {
  static SystemClock clock;
  return clock;
}

}  // namespace webhooks
