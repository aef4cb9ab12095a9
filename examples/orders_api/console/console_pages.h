// The HTML of orders-api's console pages (console.h), every dynamic value escaped
// (console::escape_html, links' values console::url_encode). The element ids are the contract the
// browser tests rely on (docs/orders-api.md, "Console"): keep them.
#pragma once

#include <httplib.h>

#include <optional>
#include <string>

#include "webhooks/console/page.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::orders {

inline constexpr const char* kConsoleTitle = "orders-api console";

// The list page's query: state (in_progress, completed, failed or empty), since and until
// (datetime-local "YYYY-MM-DDTHH:MM[:SS]" read as UTC, or RFC 3339), cursor.
struct KeysFilter {
  std::string state, since, until;  // as given, for the form
  idempotency::ListQuery query;
  std::string error;  // a value that could not be read (then that filter is not applied)
};
KeysFilter read_filter(const httplib::Request& req);

// GET /console: form#filters, table#keys with a tr[data-key] per key, a#next-page.
console::Page keys_page(const std::string& csrf_token, const std::string& merchant,
                        const KeysFilter& filter, const idempotency::ListPage& page,
                        const std::string& error);

// GET /console/keys/{key}: the record's fields by id (#key-state ...), or "no such key".
console::Page key_detail_page(const std::string& csrf_token, const std::string& key,
                              const std::optional<idempotency::RecordView>& view);

}  // namespace webhooks::orders
