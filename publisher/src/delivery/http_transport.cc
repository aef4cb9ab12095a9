#include "delivery/http_transport.h"

#include "delivery/delivery_queue.h"

namespace webhooks::publisher {
namespace {

class QueueChannel final : public DeliveryChannel {
 public:
  explicit QueueChannel(const HttpDeliveryOptions& options) : queue_(options) {}
  Ticket submit(DeliveryRequest request) override { return queue_.submit(std::move(request)); }
  std::vector<Completion> poll(std::chrono::milliseconds wait) override {
    std::vector<Completion> out;
    for (auto& c : queue_.poll(wait)) out.push_back({c.ticket, std::move(c.result)});
    return out;
  }
  void wakeup() override { queue_.wakeup(); }

 private:
  detail::DeliveryQueue queue_;
};

}  // namespace

std::unique_ptr<DeliveryChannel> HttpTransport::open_channel() {
  return std::make_unique<QueueChannel>(options_);
}

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
