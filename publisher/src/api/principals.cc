#include "webhooks/publisher/principals.h"

#include "webhooks/console/session.h"
#include "webhooks/error.h"

namespace webhooks::publisher {

std::string_view to_string(Role role) { return role == Role::admin ? "admin" : "viewer"; }

bool valid_principal_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Principal parse_principal(std::string_view text, Role role) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return Principal{"admin", std::string(text), role};
  Principal p{std::string(text.substr(0, colon)), std::string(text.substr(colon + 1)), role};
  if (!valid_principal_name(p.name)) {
    throw Error(ErrorCode::invalid_argument,
                "NAME in NAME:TOKEN must be 1 to 64 of A-Z a-z 0-9 _ . -");
  }
  if (p.token.empty()) throw Error(ErrorCode::invalid_argument, "the token after NAME: is empty");
  return p;
}

Principals::Principals(std::vector<Principal> all) : all_(std::move(all)) {
  for (std::size_t i = 0; i < all_.size(); ++i) {
    if (!valid_principal_name(all_[i].name)) {
      throw Error(ErrorCode::invalid_argument,
                  "NAME in NAME:TOKEN must be 1 to 64 of A-Z a-z 0-9 _ . -");
    }
    if (all_[i].token.empty()) {
      throw Error(ErrorCode::invalid_argument, "the token of " + all_[i].name + " is empty");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (all_[j].name == all_[i].name) {
        throw Error(ErrorCode::invalid_argument,
                    "the token name " + all_[i].name + " is given twice");
      }
      if (all_[j].token == all_[i].token) {
        throw Error(ErrorCode::invalid_argument,
                    "tokens " + all_[j].name + " and " + all_[i].name + " are the same");
      }
    }
  }
}

const Principal* Principals::by_token(std::string_view token) const {
  const Principal* found = nullptr;
  for (const Principal& p : all_) {
    if (console::same_secret(p.token, token)) found = &p;
  }
  return token.empty() ? nullptr : found;
}

const Principal* Principals::by_name(std::string_view name) const {
  for (const Principal& p : all_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace webhooks::publisher
