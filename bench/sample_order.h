// The event payload every benchmark sends: a typical order of about 150 bytes, numbered `i`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bench {

inline nlohmann::json sample_order(int i) {
  return {{"order_id", "ord_" + std::to_string(i)},
          {"amount", 1000 + i},
          {"currency", "EUR"},
          {"reference", "bench reference text of a typical size"}};
}

}  // namespace bench
