#include "webhooks/idempotency/claims.h"

#include "scoped_key.h"

namespace webhooks::idempotency {

InProcessClaims::Claim::~Claim() {
  if (!owner_) return;
  std::lock_guard lock(owner_->mutex_);
  owner_->held_.erase(id_);
}

std::optional<InProcessClaims::Claim> InProcessClaims::try_claim(std::string_view scope,
                                                                 std::string_view key) {
  std::string id = detail::scoped_key(scope, key);
  std::lock_guard lock(mutex_);
  if (!held_.insert(id).second) return std::nullopt;
  return Claim(*this, std::move(id));
}

std::size_t InProcessClaims::size() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

}  // namespace webhooks::idempotency
