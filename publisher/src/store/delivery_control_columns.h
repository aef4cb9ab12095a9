// publisher_endpoints' delivery-control columns (schema 0006_delivery_control.sql): rate_limit,
// ordering, headers (a JSON object), auth (a JSON credential or NULL), client_certificate and
// client_key (PEM or NULL), in that order wherever the store reads or writes them.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "webhooks/db.h"
#include "webhooks/publisher/model.h"

namespace webhooks::publisher::detail {

inline constexpr std::size_t kControlColumns = 6;

// The six columns' values for `control`, owning the text the parameters point into.
class ControlColumns {
 public:
  explicit ControlColumns(const DeliveryControl& control);  // keeps a reference to `control`
  std::array<db::Param, kControlColumns> params() const;

 private:
  const DeliveryControl& control_;
  std::string ordering_, headers_, auth_;
};
// The control read from six columns starting at `first`. Text that does not parse (never
// written) reads as the default of its field. Throws nothing.
DeliveryControl control_from(const db::Rows& rows, std::size_t row, std::size_t first);

}  // namespace webhooks::publisher::detail
