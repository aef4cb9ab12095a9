// The receiver's dedup writes through the idempotency core (idempotency::Store), optionally
// grouped: concurrent callers' begin, complete and fail are queued, and the first caller to find
// no batch running becomes the leader: it applies every queued write in one transaction (its own
// included), commits, wakes the callers whose writes it committed and hands the lead to the
// oldest caller still queued. Each caller returns only after the transaction holding its write
// has committed. A batch that fails is re-run one write per transaction, so one bad write fails
// only its caller.
#pragma once

#include <exception>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string_view>
#include <vector>

#include "webhooks/db.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::receiver::detail {

class DedupWriter {
 public:
  // `grouped` false: every write is its own transaction (or autocommit statement).
  DedupWriter(idempotency::Store& store, bool grouped);
  DedupWriter(const DedupWriter&) = delete;
  DedupWriter& operator=(const DedupWriter&) = delete;

  // As idempotency::Store::begin / complete / fail. Throw Error(storage) on database failure.
  // Grouped, begin first reads the record (Store::peek): a duplicate, a reused id or a live lease
  // is answered from that read, without a write; the rest is queued.
  idempotency::BeginResult begin(std::string_view scope, std::string_view key,
                                 std::string_view fingerprint, UnixMillis now);
  bool complete(const idempotency::Lease& lease, const idempotency::Response& response,
                UnixMillis now);
  bool fail(const idempotency::Lease& lease, UnixMillis now);

 private:
  struct Op {
    enum class Kind { begin, complete, fail };
    explicit Op(Kind k) : kind(k) {}
    Kind kind;
    std::string_view scope, key, fingerprint;
    const idempotency::Lease* lease = nullptr;
    const idempotency::Response* response = nullptr;
    UnixMillis now = 0;
    idempotency::BeginResult begun;
    bool ok = false;
    bool lead = false;  // set (under mutex_) when the caller is woken to lead the next batch
    std::exception_ptr error;
    std::binary_semaphore done{0};
  };

  void submit(Op& op);
  void lead(std::unique_lock<std::mutex>& lock, Op& own);
  void apply(db::Transaction& tx, Op& op);

  idempotency::Store& store_;
  bool grouped_;
  std::mutex mutex_;
  std::vector<Op*> queue_;  // writes waiting for the next batch, oldest first
  bool leading_ = false;    // a caller is running a batch (or has been handed the lead)
};

}  // namespace webhooks::receiver::detail
