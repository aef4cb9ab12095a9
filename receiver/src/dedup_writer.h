// The receiver's dedup writes through the idempotency core (idempotency::Store), optionally
// grouped: concurrent callers' begin, complete and fail are queued, and one writer thread applies
// every queued write in one transaction; each caller returns only after the transaction holding
// its write has committed. A caller that finds nothing queued and nothing being committed commits
// its own write on its own thread, sparing two thread wake-ups. A batch that fails is re-run one write per transaction, so one bad
// write fails only its caller. (A leader/follower variant, where the first waiting caller commits
// the batch and hands the lead on, was measured slower on 2 cores: each hand-over puts a thread
// wake-up between two batches; see docs/receiver.md.)
#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <semaphore>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "webhooks/db.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::receiver::detail {

class DedupWriter {
 public:
  // `grouped` false: every write is its own transaction (or autocommit statement).
  DedupWriter(idempotency::Store& store, bool grouped);
  ~DedupWriter();  // commits what is queued, then stops the writer thread
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
    std::exception_ptr error;
    std::binary_semaphore done{0};
  };

  void submit(Op& op);
  void commit(std::span<Op* const> batch);  // in one transaction; per write if that fails
  void apply(db::Transaction& tx, Op& op);
  void run();  // the writer thread

  idempotency::Store& store_;
  bool grouped_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Op*> queue_;  // writes waiting for the next batch, oldest first
  bool writing_ = false;  // a batch (the writer's, or one caller's own write) is being committed
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace webhooks::receiver::detail
