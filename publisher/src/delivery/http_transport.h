// The dispatcher's Transport over HttpDelivery (libcurl multi): a small pool of clients, one per
// concurrent caller, so each worker keeps its own connection cache and in-flight window.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "delivery/dispatcher.h"
#include "delivery/http_delivery.h"

namespace webhooks::publisher {

class HttpTransport final : public Transport {
 public:
  // Each client gets `options`; clients are created on demand, one per concurrent send().
  explicit HttpTransport(HttpDeliveryOptions options = {}) : options_(options) {}
  std::vector<DeliveryResult> send(const std::vector<DeliveryRequest>& batch) override;
  // A channel over its own DeliveryQueue (detail/delivery_queue.h): its own connections.
  std::unique_ptr<DeliveryChannel> open_channel() override;

 private:
  HttpDeliveryOptions options_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<HttpDelivery>> idle_;
};

}  // namespace webhooks::publisher
