// The engine under HttpDelivery (http_delivery.h): requests submitted one by one and their
// results collected as they finish, over one libcurl multi handle. Not part of the public API:
// HttpDelivery::deliver() is built on it, and tests (tests/publisher/http_delivery_test.cc) use it
// to watch transfers finish out of order and to wake a waiting poll.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "delivery/http_delivery.h"

namespace webhooks::publisher::detail {

// Thread safety: one thread at a time may call submit, poll and pending (they share the multi
// handle). wakeup() may be called from any thread.
class DeliveryQueue {
 public:
  using Ticket = std::uint64_t;
  struct Completion {
    Ticket ticket;
    DeliveryResult result;
  };

  // Throws as HttpDelivery's constructor.
  explicit DeliveryQueue(HttpDeliveryOptions options);
  // Abandons transfers still queued or in flight; they produce no result.
  ~DeliveryQueue();
  DeliveryQueue(const DeliveryQueue&) = delete;
  DeliveryQueue& operator=(const DeliveryQueue&) = delete;

  // Queues a request and returns its ticket (increasing from 1). Never blocks, never throws for
  // a bad request: that becomes an `invalid_request` result from the next poll().
  Ticket submit(DeliveryRequest request);

  // Runs transfers for up to `wait`, returning as soon as at least one has finished (with every
  // one finished by then), when nothing is pending, or when wakeup() is called; may return an
  // empty vector. Each ticket is returned exactly once.
  std::vector<Completion> poll(std::chrono::milliseconds wait);

  // Submitted and not yet returned by poll().
  std::size_t pending() const;

  // Makes a poll() that is waiting, or the next one, return early. Thread-safe.
  void wakeup();

  // The ticket the next submit() returns.
  Ticket next_ticket() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace webhooks::publisher::detail
