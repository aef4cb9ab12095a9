#include "webhooks/publisher/http_transport.h"

namespace webhooks::publisher {

std::vector<DeliveryResult> HttpTransport::send(const std::vector<DeliveryRequest>& batch) {
  std::unique_ptr<HttpDelivery> client;
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      client = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!client) client = std::make_unique<HttpDelivery>(options_);
  std::vector<DeliveryResult> results = client->deliver(batch);
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(client));
  }
  return results;
}

}  // namespace webhooks::publisher
