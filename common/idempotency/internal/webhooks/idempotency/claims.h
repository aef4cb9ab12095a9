// In-process claims on (scope, key): while one caller of this process runs the operation of a
// key, another caller of the same key is told so at once, without a database round trip. A
// claim says nothing about other processes: the durable record (Store) settles those.
//
//   InProcessClaims claims;
//   auto claim = claims.try_claim(scope, key);
//   if (!claim) return in_use(...);     // this process is on it right now: 409
//   ...                                 // released when `claim` is destroyed
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace webhooks::idempotency {

class InProcessClaims {
 public:
  // Held while the operation runs; releases the key when destroyed. Movable, not copyable.
  class Claim {
   public:
    Claim(Claim&& other) noexcept : owner_(other.owner_), id_(std::move(other.id_)) {
      other.owner_ = nullptr;
    }
    Claim& operator=(Claim&& other) noexcept {
      std::swap(owner_, other.owner_);
      std::swap(id_, other.id_);
      return *this;  // ours, if any, is released by `other`'s destructor
    }
    Claim(const Claim&) = delete;
    ~Claim();

   private:
    friend class InProcessClaims;
    Claim(InProcessClaims& owner, std::string id) : owner_(&owner), id_(std::move(id)) {}
    InProcessClaims* owner_;
    std::string id_;
  };

  // The claim on (scope, key), or std::nullopt when a caller of this process holds it. Throws
  // std::bad_alloc only.
  std::optional<Claim> try_claim(std::string_view scope, std::string_view key);
  // How many keys are claimed right now.
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_set<std::string> held_;  // scope + '\0' + key
};

}  // namespace webhooks::idempotency
