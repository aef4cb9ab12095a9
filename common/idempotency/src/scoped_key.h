// Two-part names of common/idempotency (internal): `first`, `separator`, `second` joined; the
// component scope ("component:id"), the route ("METHOD /path") and the scoped key below.
#pragma once

#include <string>
#include <string_view>

namespace webhooks::idempotency::detail {

inline std::string joined(std::string_view first, char separator, std::string_view second) {
  std::string out;
  out.reserve(first.size() + 1 + second.size());
  out.append(first).push_back(separator);
  out.append(second);
  return out;
}

// The one string that names (scope, key) in this process's in-memory maps of records
// (InProcessClaims, ReplayCache): scope, a NUL byte, key.
inline std::string scoped_key(std::string_view scope, std::string_view key) {
  return joined(scope, '\0', key);
}

}  // namespace webhooks::idempotency::detail
