#include "delivery/http_delivery.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "delivery/delivery_queue.h"
#include "network/ascii.h"
#include "network/ssrf_guard.h"
#include "webhooks/error.h"

namespace webhooks::publisher {
namespace detail {

// libcurl's side of one request, from submit() to its DeliveryResult: owns the easy handle and
// everything it points to. Not a shape of the attempt: it never leaves this file. (In detail, not
// the anonymous namespace: DeliveryQueue::Impl, declared in a header, holds them.)
struct CurlTransfer {
  DeliveryQueue::Ticket ticket = 0;
  DeliveryRequest request;
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  char error_buffer[CURL_ERROR_SIZE] = {};
  std::size_t body_cap = 0;
  const SsrfOptions* ssrf = nullptr;
  std::string refusal;  // the SSRF check's last refusal, if any
  std::string origin;   // scheme://host:port of the URL, for the per-endpoint connection cap
  DeliveryResult result;

  ~CurlTransfer() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    curl_slist_free_all(header_list);
  }
};

}  // namespace detail

namespace {

using detail::CurlTransfer;
using detail::DeliveryQueue;
using detail::lowercase;

// "scheme://authority" of `url`, lowercased: the unit of the per-endpoint connection cap. A URL
// without "://" is its own origin (it fails later, as an invalid request).
std::string origin_of(std::string_view url) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const std::size_t end = url.find_first_of("/?#", scheme_end + 3);
  std::string origin(url.substr(0, end));
  for (char& c : origin) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return origin;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<CurlTransfer*>(user);
  const std::size_t n = size * count;
  const std::size_t room = t->body_cap - t->result.body.size();
  t->result.body.append(data, std::min(n, room));
  if (n <= room) return n;
  t->result.body_truncated = true;
  return 0;  // stop reading: curl ends the transfer with CURLE_WRITE_ERROR
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<CurlTransfer*>(user);
  const std::size_t n = size * count;
  const std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {  // a new response (after 1xx): forget the previous headers
    t->result.headers.clear();
    t->result.retry_after.reset();
    return n;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return n;  // blank line, folded or junk
  std::string name = lowercase(trim(line.substr(0, colon)));
  std::string value(trim(line.substr(colon + 1)));
  if (name == "retry-after") t->result.retry_after = value;
  if (t->result.headers.size() < HttpDelivery::kMaxResponseHeaders) {
    t->result.headers.emplace_back(std::move(name), std::move(value));
  }
  return n;
}

curl_socket_t on_open_socket(void* user, curlsocktype, curl_sockaddr* address) {
  auto* t = static_cast<CurlTransfer*>(user);
  const AddressCheck check = check_connect_address(&address->addr, address->addrlen, *t->ssrf);
  if (!check) {
    t->refusal = check.message;
    return CURL_SOCKET_BAD;
  }
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

bool valid_header(const std::pair<std::string, std::string>& h) {
  auto bad = [](char c) { return c == '\r' || c == '\n' || c == '\0'; };
  return !h.first.empty() && h.first.find(':') == std::string::npos &&
         std::none_of(h.first.begin(), h.first.end(), bad) &&
         std::none_of(h.second.begin(), h.second.end(), bad);
}

TransportError error_kind(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return TransportError::timeout;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
      return TransportError::connect;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
      return TransportError::tls;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return TransportError::invalid_request;
    default:
      return TransportError::other;
  }
}

void set_failure(DeliveryResult& r, TransportError kind, std::string message) {
  r.status = 0;
  r.error = kind;
  r.error_message = std::move(message);
}

std::once_flag curl_init_once;

}  // namespace

namespace detail {

struct DeliveryQueue::Impl {
  HttpDeliveryOptions options;
  SsrfOptions ssrf;
  CURLM* multi = nullptr;
  Ticket next_ticket = 1;
  std::deque<std::unique_ptr<CurlTransfer>> queued;
  std::unordered_map<CURL*, std::unique_ptr<CurlTransfer>> running;
  std::unordered_map<std::string, std::size_t> running_per_origin;
  std::vector<Completion> ready;  // finished without running (invalid requests)
  std::atomic<bool> woken{false};

  // Configures the easy handle; false (with the result filled in) when the request is unusable.
  bool prepare(CurlTransfer& t) {
    if (!std::all_of(t.request.headers.begin(), t.request.headers.end(), valid_header)) {
      set_failure(t.result, TransportError::invalid_request,
                  "a request header has an empty name, a colon in its name, or CR/LF/NUL");
      return false;
    }
    t.easy = curl_easy_init();
    if (t.easy == nullptr) {
      set_failure(t.result, TransportError::other, "curl_easy_init failed");
      return false;
    }
    bool has_content_type = false;
    for (const auto& [name, value] : t.request.headers) {
      has_content_type = has_content_type || lowercase(name) == "content-type";
      t.header_list = curl_slist_append(t.header_list, (name + ": " + value).c_str());
    }
    if (!has_content_type) {
      t.header_list = curl_slist_append(t.header_list, "content-type: application/json");
    }
    t.header_list = curl_slist_append(t.header_list, "Expect:");  // no 100-continue round trip
    t.body_cap = options.max_response_bytes;
    t.ssrf = &ssrf;
    CURL* e = t.easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.error_buffer);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROXY, "");  // ignore http_proxy and friends
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options.connect_timeout.count()));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options.total_timeout.count()));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t.request.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(t.request.body.size()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.header_list);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &t);
    if (!t.request.client_certificate.empty()) {
      curl_blob cert{t.request.client_certificate.data(), t.request.client_certificate.size(),
                     CURL_BLOB_NOCOPY};
      curl_blob key{t.request.client_key.data(), t.request.client_key.size(), CURL_BLOB_NOCOPY};
      curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
      curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
      curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
    }
    if (!options.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, options.ca_file.c_str());
    if (curl_easy_setopt(e, CURLOPT_URL, t.request.url.c_str()) != CURLE_OK) {
      set_failure(t.result, TransportError::invalid_request, "URL could not be used");
      return false;
    }
    return true;
  }

  // Moves queued transfers into the multi handle while there is room, oldest first, skipping
  // those whose endpoint already has max_connections_per_endpoint transfers running.
  void start_queued() {
    const std::size_t cap = options.max_connections_per_endpoint;
    for (auto it = queued.begin(); it != queued.end() && running.size() < options.max_in_flight;) {
      const auto count = running_per_origin.find((*it)->origin);
      if (cap != 0 && count != running_per_origin.end() && count->second >= cap) {
        ++it;
        continue;
      }
      std::unique_ptr<CurlTransfer> t = std::move(*it);
      it = queued.erase(it);
      if (!prepare(*t) || curl_multi_add_handle(multi, t->easy) != CURLM_OK) {
        if (t->result.error_message.empty())
          set_failure(t->result, TransportError::other, "curl_multi_add_handle failed");
        ready.push_back({t->ticket, std::move(t->result)});
        continue;
      }
      ++running_per_origin[t->origin];
      CURL* easy = t->easy;
      running.emplace(easy, std::move(t));
    }
  }

  void finish(CURL* easy, CURLcode code, std::vector<Completion>& done) {
    auto it = running.find(easy);
    if (it == running.end()) return;
    std::unique_ptr<CurlTransfer> t = std::move(it->second);
    running.erase(it);
    if (const auto count = running_per_origin.find(t->origin); count != running_per_origin.end()) {
      if (--count->second == 0) running_per_origin.erase(count);
    }
    curl_multi_remove_handle(multi, easy);
    DeliveryResult& r = t->result;
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_off_t total_us = 0;
    curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total_us);
    r.latency_ms = static_cast<std::int64_t>(total_us / 1000);
    if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && r.body_truncated && status != 0)) {
      r.status = static_cast<int>(status);
    } else if (code == CURLE_COULDNT_CONNECT && !t->refusal.empty()) {
      set_failure(r, TransportError::address_refused, t->refusal);
    } else {
      const std::string message =
          t->error_buffer[0] != '\0' ? std::string(t->error_buffer) : curl_easy_strerror(code);
      set_failure(r, error_kind(code), message);
    }
    done.push_back({t->ticket, std::move(r)});
  }

  void collect(std::vector<Completion>& done) {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg == CURLMSG_DONE) finish(msg->easy_handle, msg->data.result, done);
    }
  }
};

DeliveryQueue::DeliveryQueue(HttpDeliveryOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.max_in_flight == 0) {
    throw Error(ErrorCode::invalid_argument, "max_in_flight must be at least 1");
  }
  if (options.connect_timeout.count() <= 0 || options.total_timeout.count() <= 0) {
    throw Error(ErrorCode::invalid_argument, "delivery timeouts must be positive");
  }
  std::call_once(curl_init_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  impl_->options = options;
  impl_->ssrf.allow_private_networks = options.allow_private_networks;
  impl_->ssrf.allowed_networks = options.allowed_networks;
  impl_->multi = curl_multi_init();
  if (impl_->multi == nullptr) throw Error(ErrorCode::io, "curl_multi_init failed");
  const std::size_t idle =
      options.max_idle_connections != 0 ? options.max_idle_connections : options.max_in_flight;
  curl_multi_setopt(impl_->multi, CURLMOPT_MAXCONNECTS, static_cast<long>(idle));
}

DeliveryQueue::~DeliveryQueue() {
  for (auto& [easy, transfer] : impl_->running) curl_multi_remove_handle(impl_->multi, easy);
  impl_->running.clear();
  curl_multi_cleanup(impl_->multi);
}

DeliveryQueue::Ticket DeliveryQueue::submit(DeliveryRequest request) {
  auto t = std::make_unique<CurlTransfer>();
  t->ticket = impl_->next_ticket++;
  t->request = std::move(request);
  t->origin = origin_of(t->request.url);
  const Ticket ticket = t->ticket;
  impl_->queued.push_back(std::move(t));
  return ticket;
}

std::vector<DeliveryQueue::Completion> DeliveryQueue::poll(std::chrono::milliseconds wait) {
  using Steady = std::chrono::steady_clock;
  const Steady::time_point deadline = Steady::now() + wait;
  std::vector<Completion> done = std::move(impl_->ready);
  impl_->ready.clear();
  for (;;) {
    impl_->start_queued();
    int still_running = 0;
    curl_multi_perform(impl_->multi, &still_running);
    impl_->collect(done);
    impl_->start_queued();  // refill the slots just freed; they start on the next perform
    for (auto& c : impl_->ready) done.push_back(std::move(c));
    impl_->ready.clear();
    if (!done.empty() || impl_->running.empty()) return done;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
    if (left.count() <= 0) return done;
    int woken = 0;
    curl_multi_poll(impl_->multi, nullptr, 0,
                    static_cast<int>(std::min<std::int64_t>(left.count(), 1000)), &woken);
    // curl_multi_poll also returns early on wakeup(), which the flag tells apart from activity.
    if (impl_->woken.exchange(false)) return done;
  }
}

std::size_t DeliveryQueue::pending() const {
  return impl_->queued.size() + impl_->running.size() + impl_->ready.size();
}

void DeliveryQueue::wakeup() {
  impl_->woken.store(true);
  curl_multi_wakeup(impl_->multi);
}

DeliveryQueue::Ticket DeliveryQueue::next_ticket() const { return impl_->next_ticket; }

}  // namespace detail

HttpDelivery::HttpDelivery(HttpDeliveryOptions options)
    : queue_(std::make_unique<detail::DeliveryQueue>(options)) {}

HttpDelivery::~HttpDelivery() = default;

std::vector<DeliveryResult> HttpDelivery::deliver(std::vector<DeliveryRequest> requests) {
  std::vector<DeliveryResult> results(requests.size());
  if (requests.empty()) return results;
  // A previous deliver() returned with nothing pending, so the tickets run on from here.
  const detail::DeliveryQueue::Ticket first = queue_->next_ticket();
  for (auto& r : requests) queue_->submit(std::move(r));
  while (queue_->pending() != 0) {
    for (auto& c : queue_->poll(std::chrono::seconds(1))) {
      results[c.ticket - first] = std::move(c.result);
    }
  }
  return results;
}

}  // namespace webhooks::publisher
