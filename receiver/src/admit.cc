// A delivery admitted: its size and signature verified, its body parsed, a duplicate answered
// from the replay cache or the record, the event claimed in this process (receiver_impl.h).
#include "receiver_impl.h"
#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/http_server.h"
#include "webhooks/json_body.h"
#include "webhooks/json_parse.h"
#include "webhooks/wire.h"

namespace webhooks::receiver {
namespace {

using providers::ProviderStatus;

// The Standard Webhooks verifier's status as the provider status of the same meaning.
ProviderStatus as_provider_status(VerifyStatus status) {
  switch (status) {
    case VerifyStatus::ok:
      return ProviderStatus::ok;
    case VerifyStatus::missing_header:
      return ProviderStatus::missing_header;
    case VerifyStatus::malformed_header:
      break;
    case VerifyStatus::no_matching_signature:
      return ProviderStatus::bad_signature;
    case VerifyStatus::timestamp_too_old:
      return ProviderStatus::timestamp_too_old;
    case VerifyStatus::timestamp_too_new:
      return ProviderStatus::timestamp_too_new;
  }
  return ProviderStatus::malformed_header;
}

}  // namespace

Answer Receiver::Impl::refuse(const Event& event, int status, std::string_view code,
                              std::string_view message) {
  log(event, code, status);
  return idempotency::error_response(status, code, message);
}

std::optional<Answer> Receiver::Impl::unverified(const Event& event, ProviderStatus status,
                                                 std::string_view message) {
  switch (status) {
    case ProviderStatus::ok:
      return std::nullopt;
    case ProviderStatus::missing_header:
    case ProviderStatus::malformed_header:
      return refuse(event, 400, "headers_invalid", message);
    case ProviderStatus::bad_signature:
      return refuse(event, 401, "signature_invalid", message);
    case ProviderStatus::timestamp_too_old:
    case ProviderStatus::timestamp_too_new:
      return refuse(event, 401, "timestamp_out_of_tolerance", message);
    case ProviderStatus::missing_id:
      return refuse(event, 400, "event_id_missing", message);
  }
  return refuse(event, 400, "headers_invalid", message);
}

std::optional<Answer> Receiver::Impl::verify(const Headers& headers, std::string_view body,
                                             Event& event, Owned& owned) {
  if (body.size() > config.max_body_bytes) {
    return refuse(event, 413, "payload_too_large",
                  "the body is larger than " + std::to_string(config.max_body_bytes) + " bytes");
  }
  if (provider_verifier) return verify_provider(headers, body, event, owned);
  std::optional<std::string> signature;
  SignedHeaders signed_headers;
  VerifyResult verified = read_signed_headers(headers, signed_headers, signature);
  if (verified) verified = verifier->verify(signed_headers, body, clock.now_seconds());
  if (auto refused = unverified(event, as_provider_status(verified.status), verified.message)) {
    return refused;
  }
  event.id = *signed_headers.id;
  event.timestamp = verified.timestamp;
  event.body = body;
  return std::nullopt;
}

std::optional<Answer> Receiver::Impl::verify_provider(const Headers& headers, std::string_view body,
                                                      Event& event, Owned& owned) {
  const providers::ProviderResult verified = provider_verifier->verify(
      [&](std::string_view name) { return headers.get(name); }, body, clock.now_seconds());
  if (auto refused = unverified(event, verified.status, verified.message)) return refused;
  owned.provider_id = verified.event_id;
  event.id = owned.provider_id;
  event.timestamp = verified.timestamp;
  event.body = body;
  return std::nullopt;
}

const nlohmann::json& Event::payload() const {
  if (!payload_) payload_ = parse_json(body);
  return *payload_;
}

std::optional<Answer> Receiver::Impl::parse(const Headers& headers, std::string_view body,
                                            Event& event, Owned& owned) {
  if (provider_verifier && provider_verifier->provider() == providers::Provider::github &&
      http::is_form_media_type(headers.get("Content-Type").value_or(""))) {
    std::string why;
    std::optional<std::string> json = form_payload(body, why);
    if (!json) return refuse(event, 400, "invalid_form", why);
    owned.form_json = std::move(*json);
    body = owned.form_json;
    event.body = body;
  }
  JsonObjectScan scan;
  try {
    scan = scan_json_object(body, "type");
  } catch (const Error& e) {
    return refuse(event, 400, "invalid_json", e.what());
  }
  if (!scan.is_object) return refuse(event, 400, "invalid_json", "the body is not a JSON object");
  if (scan.member) {
    owned.type = std::move(*scan.member);
    event.type = owned.type;
  } else {
    const auto lookup = [&](std::string_view name) { return headers.get(name); };
    event.type =
        (provider_verifier ? provider_verifier->event_type(lookup) : headers.get(kHeaderEventType))
            .value_or("");
  }
  return std::nullopt;
}

std::optional<Answer> Receiver::Impl::admit(const Headers& headers, std::string_view body,
                                            Admission& a, bool read_record) {
  Event& event = a.event;
  std::string& fingerprint = a.fingerprint;
  event.delivery_id = headers.get(kHeaderDeliveryId).value_or("");
  if (auto answer = verify(headers, body, event, a.owned)) return answer;
  // A duplicate of an event this process completed lately, with the same body, is answered from
  // the replay cache before the body is scanned: the body is byte for byte one that passed the
  // scan. It is logged with the type remembered with the answer (the handled delivery's).
  fingerprint = sha256_hex(body);
  const auto cached =
      replays.find(config.consumer, event.id, fingerprint, clock.now_ms(), &a.owned.type);
  if (cached && cached->outcome == idempotency::BeginOutcome::replay) {
    event.type = a.owned.type;
    return settled(event, *cached, {});
  }
  if (auto answer = parse(headers, body, event, a.owned)) return answer;
  if (cached) return settled(event, *cached, {});  // another body under a remembered event id
  a.claim = claims.load()->try_claim(config.consumer, event.id);
  if (!a.claim) {  // a delivery of this event is being handled by this process right now
    store.counts().add(config.consumer, event.id, idempotency::BeginOutcome::in_progress);
    log(event, "event_in_progress", 409);
    return idempotency::in_use(idempotency::kEventVocabulary,
                               idempotency::kEventVocabulary.in_use_message);
  }
  if (!read_record) return std::nullopt;
  const idempotency::BeginResult seen =
      store.peek(config.consumer, event.id, fingerprint, clock.now_ms());
  event.attempt = seen.attempts;
  return settled(event, seen, fingerprint);
}

std::optional<Answer> Receiver::Impl::admit_or_answer(const Headers& headers, std::string_view body,
                                                      Admission& a, bool transactional) {
  try {
    // Before admit: each picks the claim set admit uses. In the transactional mode the group's
    // begin settles duplicates, so a new event costs no read of its record before its write.
    if (transactional) {
      share_for_transactions();
    } else {
      a.durable = durable_claims();
    }
    return admit(headers, body, a, !transactional);
  } catch (const std::exception& e) {
    return store_failed(e);  // the store failed, or another process holds the file alone
  }
}

}  // namespace webhooks::receiver
