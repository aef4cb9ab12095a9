// The event every bench_peers request carries: a real `order.created` of about 1 KiB (the issue's
// workload: a customer, shipping and billing addresses, three line items, totals and metadata),
// numbered `i` so that no two bodies are alike.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bench {

inline nlohmann::json order_created(int i) {
  const std::string n = std::to_string(i);
  const nlohmann::json address = {{"line1", "Kaiserstraße 12"},
                                  {"line2", "3. OG"},
                                  {"city", "Frankfurt am Main"},
                                  {"postal_code", "60311"},
                                  {"country", "DE"}};
  nlohmann::json items = nlohmann::json::array();
  for (int k = 1; k <= 3; ++k) {
    items.push_back({{"sku", "SKU-" + std::to_string(1000 + k) + "-" + n},
                     {"name", "Merino wool sweater, size M, colour " + std::to_string(k)},
                     {"quantity", k},
                     {"unit_amount", 2450 + 100 * k},
                     {"tax_rate", "19.00"}});
  }
  return {
      {"order_id", "ord_" + n},
      {"status", "created"},
      {"amount", 16350 + i % 1000},
      {"currency", "EUR"},
      {"customer",
       {{"id", "cus_" + n},
        {"email", "customer" + n + "@example.com"},
        {"name", "Erika Mustermann"}}},
      {"shipping_address", address},
      {"billing_address", address},
      {"items", items},
      {"payment",
       {{"method", "card"}, {"brand", "visa"}, {"last4", "4242"}, {"capture", "automatic"}}},
      {"created_at", "2026-12-04T21:00:00Z"},
      {"metadata", {{"channel", "web"}, {"campaign", "winter-sale"}, {"reference", "inv-" + n}}}};
}

}  // namespace bench
