// The receiver's dedup writes on the idempotency core's table (idempotency_records) with the
// core's semantics (DESIGN.md, "The idempotency core"), optionally grouped: concurrent callers'
// begin, complete and fail are queued, and one writer thread applies a batch of them in one
// transaction; each caller returns only after the transaction holding its write has committed.
// A batch that fails is re-run one write per transaction, so one bad write fails only its caller.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <semaphore>
#include <string_view>
#include <thread>

#include "webhooks/db.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::receiver::detail {

class DedupWriter {
 public:
  // `grouped` false: every write is its own transaction, on the caller's thread.
  DedupWriter(db::Database& db, idempotency::Settings settings, bool grouped);
  ~DedupWriter();
  DedupWriter(const DedupWriter&) = delete;
  DedupWriter& operator=(const DedupWriter&) = delete;

  // As idempotency::Store::begin / complete / fail. Throw Error(storage) on database failure.
  idempotency::BeginResult begin(std::string_view scope, std::string_view key,
                                 std::string_view fingerprint, UnixMillis now);
  bool complete(const idempotency::Lease& lease, const idempotency::Response& response,
                UnixMillis now);
  bool fail(const idempotency::Lease& lease, UnixMillis now);

  // complete inside the caller's transaction (transactional mode).
  static bool complete(db::Transaction& tx, const idempotency::Lease& lease,
                       const idempotency::Response& response, UnixMillis now);

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
  void apply(db::Transaction& tx, Op& op);
  void run();

  db::Database& db_;
  idempotency::Settings settings_;
  bool grouped_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Op*> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace webhooks::receiver::detail
