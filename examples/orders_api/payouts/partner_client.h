// The orders API's client of the payout partner: POST /transfers with X-Idempotency-Key, retried
// with the same key on timeouts, connection errors, 408, 425, 429 and 5xx; GET /transfers for
// reconciliation; POST /transfers/{id}/reversals for `reconcile --resolve`.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace webhooks::orders {

struct PartnerOptions {
  std::string url = "http://127.0.0.1:8782";  // scheme://host:port
  // Connect, read and write timeout of one try.
  std::chrono::milliseconds timeout{5000};
  // Tries per call, the first included; each retry repeats the same X-Idempotency-Key.
  int attempts = 3;
  // Wait before the first retry; doubled before each further one.
  std::chrono::milliseconds backoff{100};
};

struct TransferResult {
  enum class Kind {
    accepted,     // 2xx: the partner holds the transfer (new or replayed)
    rejected,     // another 4xx: the partner refuses this transfer for good
    unavailable,  // every try ended in a timeout, a connection error or a retryable status
  } kind = Kind::unavailable;
  int status = 0;           // the last HTTP status, 0 when the last try got none
  std::string transfer_id;  // accepted
  std::string error;        // rejected, unavailable: what went wrong, for logs and answers
  int tries = 0;
};

struct PartnerTransfer {
  std::string id, idempotency_key, currency, destination;
  std::int64_t amount = 0;
  std::string reversed_by;  // the id of its reversal, "" when not reversed
};

struct ReversalResult {
  enum class Kind {
    reversed,     // 201 new, 200 replayed, or 409 already_reversed: the transfer is reversed
    rejected,     // another 4xx (404 transfer_not_found, 422 idempotency_key_reused)
    unavailable,  // every try ended in a timeout, a connection error or a retryable status
  } kind = Kind::unavailable;
  int status = 0;           // the last HTTP status, 0 when the last try got none
  std::string reversal_id;  // reversed: the reversal that undoes the transfer
  std::string error;        // rejected, unavailable
};

class PartnerClient {
 public:
  // Throws Error(invalid_argument) when `options.url` is not an http:// URL httplib can use.
  explicit PartnerClient(PartnerOptions options);

  // Creates (or finds) the transfer for `key`. Blocks for up to attempts x timeout plus backoff.
  TransferResult create_transfer(const std::string& key, std::int64_t amount,
                                 const std::string& currency, const std::string& destination);

  // Reverses `transfer_id` under `key`, retried with the same key like create_transfer (the partner
  // always deduplicates reversals).
  ReversalResult reverse_transfer(const std::string& transfer_id, const std::string& key);

  // Every transfer the partner holds. Throws Error(io) when the partner cannot be read.
  std::vector<PartnerTransfer> list_transfers();

 private:
  PartnerOptions options_;
};

}  // namespace webhooks::orders
