// Counts, in memory, the duplicates answered from an idempotency record without running its
// operation: replays, 409s (in progress) and 422s (mismatch), per (scope, key). The Guard counts
// each answer here (a map update under a mutex, no database write: a replay is answered from the
// ReplayCache without one), and Store::flush_counts adds them to the record's replays, conflicts
// and mismatches columns in the background (Maintenance, every second by default). So the
// stored counts lag by up to one flush interval, and a crash loses the counts not flushed yet
// (docs/idempotency.md, "Looking a key up"). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace webhooks::idempotency {

enum class BeginOutcome;

class OutcomeCounts {
 public:
  // At most `max_keys` keys wait for a flush; an answer for another key beyond that is not
  // counted (see dropped()), so a database that refuses writes for long costs bounded memory.
  // About 100 bytes per key plus its scope and key.
  explicit OutcomeCounts(std::size_t max_keys = 65'536) : max_keys_(max_keys) {}

  // One answer for (scope, key): replay, in_progress (409) or mismatch (422); any other outcome
  // is ignored.
  void add(std::string_view scope, std::string_view key, BeginOutcome outcome);

  struct Increment {
    std::string scope, key;
    std::int64_t replays = 0, conflicts = 0, mismatches = 0;
  };
  // Removes and returns up to `limit` keys' pending increments (in no particular order).
  std::vector<Increment> take(std::size_t limit);
  // Returns increments that could not be written (their counts are added to any new ones).
  void put_back(std::vector<Increment> increments);

  std::size_t pending_keys() const;
  // Answers not counted because max_keys keys were pending.
  std::int64_t dropped() const;

 private:
  void merge_locked(Increment&& increment);

  const std::size_t max_keys_;
  mutable std::mutex mutex_;
  // Keyed by scope + '\n' + key (a key is printable ASCII, so '\n' never occurs in it).
  std::unordered_map<std::string, Increment> pending_;
  std::int64_t dropped_ = 0;
};

}  // namespace webhooks::idempotency
