// The answers of records this process completed (or found completed) recently, so that a
// duplicate is replayed, or refused 422 for another fingerprint, without reading the database.
// Safe because a `completed` record never changes until it expires (docs/idempotency.md,
// "Replay cache"): an entry is used only before the record's expires_at, and a key the cache
// does not hold goes to the database as before.
//
//   ReplayCache cache;                         // 65,536 entries at most, oldest dropped first
//   if (auto seen = cache.find(scope, key, fingerprint, now)) return answer_for(*seen, ...);
//   ...                                        // after the commit that completed the record:
//   cache.remember(scope, key, fingerprint, response, created_at + ttl);
//
// Thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "webhooks/clock.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::idempotency {

class ReplayCache {
 public:
  // Answers with a body over this many bytes are not remembered (the database holds them).
  static constexpr std::size_t kMaxBodyBytes = 4096;

  // At most `max_entries` records (0: remembers nothing); beyond it the oldest entry is dropped.
  // About 200 bytes per entry plus its answer's body. Throws nothing.
  explicit ReplayCache(std::size_t max_entries = 65'536);

  // Remembers that (scope, key) is completed with `fingerprint` (64 hex digits, as Store takes
  // it) and `response`, the record created at `created_at` and expiring at `expires_at` (Unix
  // milliseconds: the record's own times, BeginResult's). Call it only once the record is
  // committed completed. A response whose body is over kMaxBodyBytes is not remembered. `note`:
  // what the caller keeps beside the answer, given back by find() on a replay (the receiver: the
  // event's type, for its log line). Throws std::bad_alloc only.
  void remember(std::string_view scope, std::string_view key, std::string_view fingerprint,
                const Response& response, UnixMillis created_at, UnixMillis expires_at,
                std::string_view note = {});

  // What Store::begin would answer for (scope, key) at `now` if the cache holds it: `replay`
  // (same fingerprint; response set) or `mismatch` (another fingerprint), with the record's
  // created_at and expires_at (attempts 0: not kept). std::nullopt when the
  // cache does not hold the key or its record has expired by `now`. On a replay, `*note` (when
  // not null) is set to the note remembered with the answer. Throws std::bad_alloc only.
  std::optional<BeginResult> find(std::string_view scope, std::string_view key,
                                  std::string_view fingerprint, UnixMillis now,
                                  std::string* note = nullptr) const;

  // Entries held now.
  std::size_t size() const;

 private:
  struct Entry {
    std::string fingerprint;
    Response response;
    UnixMillis created_at = 0, expires_at = 0;
    std::string note;
  };

  std::size_t max_entries_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;  // scope + '\0' + key
  std::deque<std::string> order_;                   // ids, oldest first
};

}  // namespace webhooks::idempotency
