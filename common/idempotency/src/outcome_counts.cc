#include "webhooks/idempotency/store.h"

namespace webhooks::idempotency {
namespace {

std::string map_key(std::string_view scope, std::string_view key) {
  std::string joined;
  joined.reserve(scope.size() + key.size() + 1);
  joined.append(scope).push_back('\n');
  joined.append(key);
  return joined;
}

}  // namespace

void OutcomeCounts::add(std::string_view scope, std::string_view key, BeginOutcome outcome) {
  if (outcome != BeginOutcome::replay && outcome != BeginOutcome::in_progress &&
      outcome != BeginOutcome::mismatch) {
    return;
  }
  std::string joined = map_key(scope, key);
  std::lock_guard lock(mutex_);
  auto it = pending_.find(joined);
  if (it == pending_.end()) {
    if (pending_.size() >= max_keys_) {
      ++dropped_;
      return;
    }
    it = pending_.emplace(std::move(joined), Increment{std::string(scope), std::string(key)}).first;
  }
  Increment& counts = it->second;
  if (outcome == BeginOutcome::replay) ++counts.replays;
  if (outcome == BeginOutcome::in_progress) ++counts.conflicts;
  if (outcome == BeginOutcome::mismatch) ++counts.mismatches;
}

std::vector<OutcomeCounts::Increment> OutcomeCounts::take(std::size_t limit) {
  std::vector<Increment> taken;
  std::lock_guard lock(mutex_);
  while (!pending_.empty() && taken.size() < limit) {
    auto node = pending_.extract(pending_.begin());
    taken.push_back(std::move(node.mapped()));
  }
  return taken;
}

void OutcomeCounts::put_back(std::vector<Increment> increments) {
  std::lock_guard lock(mutex_);
  for (Increment& increment : increments) merge_locked(std::move(increment));
}

void OutcomeCounts::merge_locked(Increment&& increment) {
  std::string joined = map_key(increment.scope, increment.key);
  auto it = pending_.find(joined);
  if (it == pending_.end()) {
    pending_.emplace(std::move(joined), std::move(increment));  // it was counted: keep it
    return;
  }
  it->second.replays += increment.replays;
  it->second.conflicts += increment.conflicts;
  it->second.mismatches += increment.mismatches;
}

std::size_t OutcomeCounts::pending_keys() const {
  std::lock_guard lock(mutex_);
  return pending_.size();
}

std::int64_t OutcomeCounts::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

}  // namespace webhooks::idempotency
