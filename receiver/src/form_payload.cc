// GitHub's form deliveries: the JSON of the `payload` field of an
// application/x-www-form-urlencoded body (receiver_impl.h).
// Source: GitHub Docs, "Creating webhooks", content type application/x-www-form-urlencoded (the
// JSON payload as the value of a form parameter called payload).
#include "receiver_impl.h"
#include "webhooks/form.h"

namespace webhooks::receiver {

std::optional<std::string> form_payload(std::string_view body, std::string& why) {
  std::optional<std::string> payload;
  for (auto& [name, value] : parse_form(body)) {
    if (name != "payload") continue;
    if (payload) {
      why = "the form has more than one payload field";
      return std::nullopt;
    }
    payload = std::move(value);
  }
  if (!payload) why = "the form has no payload field";
  return payload;
}

}  // namespace webhooks::receiver
