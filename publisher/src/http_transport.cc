#include "webhooks/publisher/http_transport.h"

namespace webhooks::publisher {

std::vector<DeliveryResponse> HttpTransport::send(const std::vector<OutgoingDelivery>& batch) {
  std::unique_ptr<HttpDelivery> client;
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      client = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!client) client = std::make_unique<HttpDelivery>(options_);
  std::vector<DeliveryRequest> requests;
  requests.reserve(batch.size());
  for (const OutgoingDelivery& d : batch) requests.push_back({d.url, d.headers, d.body});
  std::vector<DeliveryResult> results = client->deliver(std::move(requests));
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(client));
  }
  std::vector<DeliveryResponse> responses;
  responses.reserve(results.size());
  for (DeliveryResult& r : results) {
    DeliveryResponse out;
    out.status = r.status;
    out.error = r.status == 0 ? std::string(to_string(r.error_kind)) + ": " + r.error : "";
    out.body_snippet = std::move(r.body);
    out.retry_after = std::move(r.retry_after);
    out.latency = std::chrono::milliseconds(r.latency_ms);
    responses.push_back(std::move(out));
  }
  return responses;
}

}  // namespace webhooks::publisher
