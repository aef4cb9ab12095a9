// Who may use the admin API and the console (docs/security.md, "Named tokens"): named bearer
// tokens, each an admin (everything) or a viewer (reads only: GET and HEAD, and the console without
// its action buttons). The daemon's --admin-token NAME:TOKEN and --viewer-token NAME:TOKEN, both
// repeatable; a bare TOKEN is named `admin`. The name is what the console's session remembers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace webhooks::publisher {

enum class Role { admin, viewer };

// "admin" or "viewer".
std::string_view to_string(Role role);

struct Principal {
  std::string name;   // [A-Za-z0-9_.-]{1,64}
  std::string token;  // compared in constant time
  Role role = Role::admin;
};

// Whether `name` is 1 to 64 of A-Z a-z 0-9 _ . -
bool valid_principal_name(std::string_view name);

// "NAME:TOKEN" (split at the first ':'), or a TOKEN without ':' named "admin", as `role`. Throws
// Error(invalid_argument) "NAME in NAME:TOKEN must be 1 to 64 of A-Z a-z 0-9 _ . -" for a bad
// name, "the token after NAME: is empty" for an empty token.
Principal parse_principal(std::string_view text, Role role);

class Principals {
 public:
  Principals() = default;
  // Throws Error(invalid_argument) naming the duplicate: "the token name NAME is given twice"
  // (names are unique across roles), "tokens NAME1 and NAME2 are the same" (a token must name
  // one principal), or a bad name or empty token as parse_principal says.
  explicit Principals(std::vector<Principal> all);

  // The principal whose token is `token` (every token compared, each in constant time), or null.
  const Principal* by_token(std::string_view token) const;
  // The principal named `name`, or null.
  const Principal* by_name(std::string_view name) const;
  bool empty() const { return all_.empty(); }

 private:
  std::vector<Principal> all_;
};

}  // namespace webhooks::publisher
