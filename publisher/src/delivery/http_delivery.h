// The publisher's HTTP client: many webhook POSTs at once over libcurl's multi interface, with a
// bounded number in flight, connection reuse, timeouts, no redirects, a capped response body and
// the SSRF check at connect time. It sends what it is given and reports what happened; signing,
// scheduling and recording attempts are the dispatcher's. Decisions in
// docs/publisher-delivery.md.
//
//   HttpDelivery client({.max_in_flight = 32});
//   auto results = client.deliver({{"https://merchant.example/hooks", headers, body}});
//   if (results[0].status == 0) log(to_string(results[0].error), results[0].error_message);
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "webhooks/publisher/ip_network.h"
#include "webhooks/publisher/model.h"

namespace webhooks::publisher {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// One signed webhook POST, exactly as it goes on the wire (the dispatcher builds it:
// dispatcher.h, build_delivery).
struct DeliveryRequest {
  std::string url;     // http or https only
  HeaderList headers;  // sent as given, in order; names and values must not contain CR or LF.
                       // "content-type: application/json" is added when none is given.
  std::string body;    // sent as the POST body, byte for byte
  // Mutual TLS (https:// only): the client certificate (chain) and its private key, PEM; both
  // empty for none. A certificate or key that does not load fails the attempt (error tls).
  std::string client_certificate, client_key;
};

// What one request came to: an HTTP status, or why there was none. The dispatcher records it as
// a DeliveryAttempt (model.h), the error still typed.
struct DeliveryResult {
  // The final HTTP status (3xx included: redirects are not followed), or 0 when `error` is not
  // `none`. A response whose headers arrived but whose body then failed (reset, timeout) counts
  // as failed, status 0: the endpoint's answer was not received whole.
  int status = 0;
  TransportError error = TransportError::none;
  std::string error_message;  // curl's message, or the SSRF refusal; empty when status != 0
  // From the start of the transfer (after any wait in the queue for a slot) to its end, as
  // measured by curl (CURLINFO_TOTAL_TIME_T), in whole milliseconds.
  std::int64_t latency_ms = 0;
  std::string body;             // the first max_response_bytes bytes of the response body
  bool body_truncated = false;  // there was more; the rest was not read (connection closed)
  // Response headers of the final response: names lowercased, values without surrounding
  // whitespace, in arrival order; at most kMaxResponseHeaders of them.
  HeaderList headers;
  std::optional<std::string> retry_after;  // the last Retry-After value, raw (retry_after.h)
};

struct HttpDeliveryOptions {
  // Transfers running at once; more wait in a queue, first in first out. Each holds a
  // connection, so this is also the most sockets open at once. Must be >= 1.
  std::size_t max_in_flight = 64;
  // Transfers running at once to one endpoint (scheme, host and port); more wait in the queue
  // behind them, their timeouts not yet started, while other endpoints' transfers go ahead.
  // Bounds the connections one endpoint must hold open: a receiver that serves each keep-alive
  // connection on its own thread (cpp-httplib: 64 by default) stalls when a sender opens more.
  // 0 means no limit beyond max_in_flight.
  std::size_t max_connections_per_endpoint = 0;
  // Idle connections kept for reuse after their transfer (libcurl's cache, per client). 0 means
  // max_in_flight. Connections are reused for the same scheme, host and port.
  std::size_t max_idle_connections = 0;
  // Time to establish TCP (and TLS) to an address. Must be positive.
  std::chrono::milliseconds connect_timeout{5'000};
  // Time for the whole request, connect included. Must be positive. Webhook receivers should
  // answer quickly and do slow work later; 15 s is generous.
  std::chrono::milliseconds total_timeout{15'000};
  // Response body bytes kept (the attempt's snippet). Beyond this the transfer stops reading.
  std::size_t max_response_bytes = 4 * 1024;
  // false (the default) refuses, at connect time, every address that is not public
  // (ssrf_guard.h), loopback included. The daemon's --allow-private-networks sets it.
  bool allow_private_networks = false;
  // Networks allowed at connect time whatever their class (the daemon's --allow-network).
  std::vector<IpNetwork> allowed_networks;
  // PEM file of the certificate authorities TLS endpoints are verified against; empty: the
  // system's store. The daemon's --ca-file sets it (e.g. a private CA, or a test's).
  std::string ca_file;
};

namespace detail {
class DeliveryQueue;
}

// A delivery client. Owns a libcurl multi handle and its connection cache, which persist across
// calls, so later requests to the same endpoint reuse connections.
//
// Thread safety: one thread at a time may call deliver(). Separate clients are independent.
// Proxies from the environment (http_proxy, ...) are ignored: the SSRF check must see the
// endpoint's own address. TLS certificates are verified against the system store.
class HttpDelivery {
 public:
  static constexpr std::size_t kMaxResponseHeaders = 64;

  // Throws webhooks::Error(ErrorCode::invalid_argument) for max_in_flight 0 or a non-positive
  // timeout, Error(ErrorCode::io) if libcurl cannot be initialised.
  explicit HttpDelivery(HttpDeliveryOptions options = {});
  ~HttpDelivery();
  HttpDelivery(const HttpDelivery&) = delete;
  HttpDelivery& operator=(const HttpDelivery&) = delete;

  // Sends every request (at most max_in_flight at once, queued first in first out) and blocks
  // until all have finished; results are in request order. Never throws for a bad request: that
  // becomes an `invalid_request` result.
  std::vector<DeliveryResult> deliver(std::vector<DeliveryRequest> requests);

 private:
  std::unique_ptr<detail::DeliveryQueue> queue_;
};

}  // namespace webhooks::publisher
