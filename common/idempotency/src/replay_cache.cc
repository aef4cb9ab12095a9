#include "webhooks/idempotency/replay_cache.h"

#include "scoped_key.h"

namespace webhooks::idempotency {

ReplayCache::ReplayCache(std::size_t max_entries) : max_entries_(max_entries) {}

void ReplayCache::remember(std::string_view scope, std::string_view key,
                           std::string_view fingerprint, const Response& response,
                           UnixMillis created_at, UnixMillis expires_at, std::string_view note) {
  if (max_entries_ == 0 || response.body.size() > kMaxBodyBytes) return;
  Entry entry{std::string(fingerprint), response, created_at, expires_at, std::string(note)};
  std::string id = detail::scoped_key(scope, key);
  std::lock_guard lock(mutex_);
  const auto [it, inserted] = entries_.try_emplace(id, std::move(entry));
  if (!inserted) {
    it->second = std::move(entry);
    return;
  }
  order_.push_back(std::move(id));
  if (order_.size() > max_entries_) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
}

std::optional<BeginResult> ReplayCache::find(std::string_view scope, std::string_view key,
                                             std::string_view fingerprint, UnixMillis now,
                                             std::string* note) const {
  if (max_entries_ == 0) return std::nullopt;
  const std::string id = detail::scoped_key(scope, key);
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end() || now >= it->second.expires_at) return std::nullopt;
  BeginResult seen;
  seen.created_at = it->second.created_at;
  seen.expires_at = it->second.expires_at;
  if (it->second.fingerprint != fingerprint) {
    seen.outcome = BeginOutcome::mismatch;
    return seen;
  }
  seen.outcome = BeginOutcome::replay;
  seen.response = it->second.response;
  if (note != nullptr) *note = it->second.note;
  return seen;
}

std::size_t ReplayCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace webhooks::idempotency
