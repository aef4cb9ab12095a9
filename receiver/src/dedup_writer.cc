#include "dedup_writer.h"

#include <utility>

namespace webhooks::receiver::detail {

using idempotency::BeginResult;
using idempotency::Lease;
using idempotency::Response;

namespace {
constexpr std::size_t kMaxBatch = 512;
}  // namespace

DedupWriter::DedupWriter(idempotency::Store& store, bool grouped)
    : store_(store), grouped_(grouped) {
  if (grouped_) thread_ = std::thread([this] { run(); });
}

DedupWriter::~DedupWriter() {
  if (!grouped_) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

BeginResult DedupWriter::begin(std::string_view scope, std::string_view key,
                               std::string_view fingerprint, UnixMillis now) {
  if (!grouped_) return store_.begin(scope, key, fingerprint, now);
  // Read first: a duplicate, a reused id or a live lease is answered without a write (those
  // states only change under a lease holder or after expiry); anything else is queued.
  if (std::optional<BeginResult> seen = store_.peek(scope, key, fingerprint, now)) {
    return std::move(*seen);
  }
  Op op(Op::Kind::begin);
  op.scope = scope;
  op.key = key;
  op.fingerprint = fingerprint;
  op.now = now;
  submit(op);
  return std::move(op.begun);
}

bool DedupWriter::complete(const Lease& lease, const Response& response, UnixMillis now) {
  if (!grouped_) return store_.complete(lease, response, now);
  Op op(Op::Kind::complete);
  op.lease = &lease;
  op.response = &response;
  op.now = now;
  submit(op);
  return op.ok;
}

bool DedupWriter::fail(const Lease& lease, UnixMillis now) {
  if (!grouped_) return store_.fail(lease, now);
  Op op(Op::Kind::fail);
  op.lease = &lease;
  op.now = now;
  submit(op);
  return op.ok;
}

void DedupWriter::submit(Op& op) {
  std::unique_lock lock(mutex_);
  if (!writing_ && queue_.empty()) {
    // Nothing to group with: commit on this thread rather than wake the writer and wait for it.
    writing_ = true;
    lock.unlock();
    Op* alone[] = {&op};
    commit(alone);
    lock.lock();
    writing_ = false;
    const bool writer_needed = !queue_.empty() || stopping_;
    lock.unlock();
    if (writer_needed) wake_.notify_one();
  } else {
    queue_.push_back(&op);
    lock.unlock();
    wake_.notify_one();
    op.done.acquire();
  }
  if (op.error) std::rethrow_exception(op.error);
}

void DedupWriter::commit(std::span<Op* const> batch) {
  try {
    store_.database().transact([&](db::Transaction& tx) {
      for (Op* op : batch) apply(tx, *op);
    });
  } catch (...) {
    for (Op* op : batch) {  // one write per transaction, so only the bad one fails
      try {
        store_.database().transact([&](db::Transaction& tx) { apply(tx, *op); });
      } catch (...) {
        op->error = std::current_exception();
      }
    }
  }
}

void DedupWriter::apply(db::Transaction& tx, Op& op) {
  switch (op.kind) {
    case Op::Kind::begin:
      op.begun = store_.begin(tx, op.scope, op.key, op.fingerprint, op.now);
      break;
    case Op::Kind::complete:
      op.ok = store_.complete(tx, *op.lease, *op.response, op.now);
      break;
    case Op::Kind::fail:
      op.ok = store_.fail(tx, *op.lease, op.now);
      break;
  }
}

void DedupWriter::run() {
  std::vector<Op*> batch;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return !writing_ && (stopping_ || !queue_.empty()); });
    if (queue_.empty()) break;  // stopping, nothing left
    batch.clear();
    if (queue_.size() <= kMaxBatch) {
      batch.swap(queue_);
    } else {
      batch.assign(queue_.begin(), queue_.begin() + kMaxBatch);
      queue_.erase(queue_.begin(), queue_.begin() + kMaxBatch);
    }
    writing_ = true;
    lock.unlock();
    commit(batch);
    // After its release an Op may be gone (it lives on its caller's stack).
    for (Op* op : batch) op->done.release();
    lock.lock();
    writing_ = false;
  }
}

}  // namespace webhooks::receiver::detail
