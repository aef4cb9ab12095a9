// The one string that names (scope, key) in this process's in-memory maps of records
// (InProcessClaims, ReplayCache): scope, a NUL byte, key. Internal to common/src/idempotency.
#pragma once

#include <string>
#include <string_view>

namespace webhooks::idempotency::detail {

inline std::string scoped_key(std::string_view scope, std::string_view key) {
  std::string id;
  id.reserve(scope.size() + 1 + key.size());
  id.append(scope).push_back('\0');
  id.append(key);
  return id;
}

}  // namespace webhooks::idempotency::detail
