#include "webhooks/http_server.h"

#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "detail/closing_answer.h"
#include "detail/event_loop.h"
#include "detail/fiber.h"
#include "webhooks/error.h"
#include "webhooks/error_body.h"

namespace webhooks::http {
namespace {

// Header names as std::string once, so a lookup in httplib's header map (keyed by std::string)
// builds no key per request ("Transfer-Encoding" is past std::string's inline buffer).
const std::string kContentType = "Content-Type";
const std::string kContentLength = "Content-Length";
const std::string kTransferEncoding = "Transfer-Encoding";

// The first value of header `name`, or nullptr; a view into the request, not a copy.
const std::string* header_value(const httplib::Request& req, const std::string& name) {
  const auto it = req.headers.find(name);
  return it == req.headers.end() ? nullptr : &it->second;
}

using HandlerResponse = httplib::Server::HandlerResponse;

void write_error(httplib::Response& res, int status, std::string_view code,
                 const std::string& message) {
  res.status = status;
  set_json_body(res, error_body(code, message));
}

std::string_view error_code_for(int status) {
  switch (status) {
    case 400:
      return "bad_request";
    case 401:
      return "unauthorized";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 408:
      return "request_timeout";
    case 411:
      return "length_required";
    case 413:
      return "payload_too_large";
    case 414:
      return "uri_too_long";
    case 415:
      return "unsupported_media_type";
    case 431:
      return "headers_too_large";
    default:
      return status >= 500 ? "internal_error" : "error";
  }
}

// Sends the answer in `res`, given before the body was read, then closes the connection, so the
// unread body is never parsed as a request. The answer says "Connection: close" (httplib copies
// it from the request).
HandlerResponse close_after(const httplib::Request& req, httplib::Response& res) {
  // cpp-httplib hands the pre-routing and error handlers its own, non-const Request.
  auto& mutable_req = const_cast<httplib::Request&>(req);
  mutable_req.headers.erase("Connection");
  mutable_req.set_header("Connection", "close");
  if (res.status == -1) res.status = 200;
  std::string body = std::move(res.body);
  std::string type = res.get_header_value("Content-Type");
  res.body.clear();
  res.headers.erase("Content-Type");
  if (body.empty()) {  // the error handler's body, here, since the answer is written by provider
    body = error_body(error_code_for(res.status), "the request could not be served");
    type = "application/json";
  }
  detail::answer_and_close(req, res, std::move(body), type);
  return HandlerResponse::Handled;
}

HandlerResponse refuse(const httplib::Request& req, httplib::Response& res, int status,
                       std::string_view code, const std::string& message) {
  write_error(res, status, code, message);
  if (req.method == "HEAD") {  // answered without a body, so close_after cannot close it
    detail::abandon_connection(req);
    return HandlerResponse::Handled;
  }
  return close_after(req, res);
}

bool all_digits(const std::string& text) {
  if (text.empty() || text.size() > 19) return false;  // 19 digits always fit in uint64
  for (const char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The methods whose body cpp-httplib 0.11 reads (detail::expect_content); any other method's
// body would stay on the connection.
bool body_is_read(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE" ||
         method == "PRI";
}

// A request whose body is still unread on the connection (it has one and was answered before
// routing read it).
bool has_unread_body(const httplib::Request& req) {
  const std::string* length = header_value(req, kContentLength);
  return length && length->find_first_not_of('0') != std::string::npos;
}

HandlerResponse guard_body(const httplib::Request& req, httplib::Response& res) {
  for (const auto& [name, value] : req.headers) {
    // RFC 9112, section 5.1: whitespace before the colon is refused with 400 (cpp-httplib would
    // take "Content-Length :" for another header and the body for the next request).
    if (name.find_first_of(" \t") != std::string::npos) {
      return refuse(req, res, 400, "bad_request", "a header name has whitespace before its ':'");
    }
  }
  if (header_value(req, kTransferEncoding)) {
    return refuse(req, res, 411, "length_required",
                  "send the body with a Content-Length header; Transfer-Encoding (chunked) "
                  "bodies are not accepted");
  }
  if (req.has_header("Content-Length")) {
    if (req.get_header_value_count("Content-Length") > 1) {
      return refuse(req, res, 400, "bad_request", "send one Content-Length header");
    }
    const std::string text = req.get_header_value("Content-Length");
    if (!all_digits(text)) {
      return refuse(req, res, 400, "bad_request",
                    "Content-Length must be a decimal number of bytes");
    }
    if (!body_is_read(req.method) && has_unread_body(req)) {
      return refuse(req, res, 400, "bad_request", req.method + " requests take no body");
    }
  } else if (req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
    const_cast<httplib::Request&>(req).set_header("Content-Length", "0");  // as in close_after()
  }
  return HandlerResponse::Unhandled;
}

// cpp-httplib 0.11's keep-alive timeout, which tune_server leaves as it is: how long an idle
// connection waits for its next request.
constexpr auto kKeepAliveTimeout = std::chrono::seconds(5);

// What stop_server learns from a server's pre-routing handler and logger: whether the server is
// stopping, and how many requests are admitted and not yet answered (their answer not written).
struct Traffic {
  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};
};

std::mutex traffic_mutex;
// Per server, set by limit_request_bodies (a server later built at the same address replaces it).
std::map<const httplib::Server*, std::shared_ptr<Traffic>> traffic_of;
// The Traffic that counts the request this pool thread (or fiber) is serving, until its answer
// is written.
Traffic* counted_on() { return static_cast<Traffic*>(fibers::local(fibers::Slot::traffic)); }
void count_on(Traffic* traffic) { fibers::local(fibers::Slot::traffic) = traffic; }

void answered() {
  if (Traffic* traffic = counted_on()) traffic->in_flight.fetch_sub(1);
  count_on(nullptr);
}

// Counts the request in, unless the server is stopping. Counting first and checking after makes
// stop_server either see the request in flight or this request see it stopping.
bool admit(Traffic& traffic) {
  answered();  // the logger did not run for this thread's last request (its answer failed)
  traffic.in_flight.fetch_add(1);
  if (traffic.stopping.load()) {
    traffic.in_flight.fetch_sub(1);
    return false;
  }
  count_on(&traffic);
  return true;
}

std::shared_ptr<Traffic> track(const httplib::Server& server) {
  auto traffic = std::make_shared<Traffic>();
  std::lock_guard lock(traffic_mutex);
  traffic_of[&server] = traffic;
  return traffic;
}

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF) without a NUL byte: what PostgreSQL can hold in a text parameter.
bool storable_text(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b == 0) return false;
    if (b < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (b >= 0xC2 && b <= 0xDF) {
      n = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (i + n >= text.size()) return false;  // truncated sequence
    for (std::size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return false;
    }
    i += n + 1;
  }
  return true;
}

// Whether the request's decoded path and query parameters are all storable_text.
bool storable_target(const httplib::Request& req) {
  if (!storable_text(req.path)) return false;
  for (const auto& [name, value] : req.params) {
    if (!storable_text(name) || !storable_text(value)) return false;
  }
  return true;
}

}  // namespace

void set_json_body(httplib::Response& res, std::string body) {
  static const std::string kJson = "application/json";
  res.body = std::move(body);
  res.headers.erase(kContentType);
  res.set_header(kContentType, kJson);
}

namespace {

// The media type of a Content-Type value: without parameters and surrounding whitespace.
std::string_view media_type(std::string_view type) {
  const std::size_t begin = type.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  type.remove_prefix(begin);
  type = type.substr(0, type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  return type;
}

using detail::ascii_iequals;

}  // namespace

bool is_json_media_type(std::string_view content_type) {
  const std::string_view type = media_type(content_type);
  constexpr std::string_view kApplication = "application/", kSuffix = "+json";
  if (ascii_iequals(type, "application/json")) return true;
  return type.size() >= kApplication.size() && type.size() >= kSuffix.size() &&
         ascii_iequals(type.substr(0, kApplication.size()), kApplication) &&
         ascii_iequals(type.substr(type.size() - kSuffix.size()), kSuffix) &&
         type.find('/') == type.rfind('/');
}

bool is_form_media_type(std::string_view content_type) {
  return ascii_iequals(media_type(content_type), "application/x-www-form-urlencoded");
}

std::string_view single_header(std::string_view name) { return detail::single_header(name); }

std::string_view bearer_token(const httplib::Request& req) {
  static const std::string kAuthorization = "Authorization";
  const std::string* header = header_value(req, kAuthorization);
  if (header == nullptr) return {};
  std::string_view value = *header;
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() <= kScheme.size() || !ascii_iequals(value.substr(0, kScheme.size()), kScheme)) {
    return {};
  }
  value.remove_prefix(kScheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  return value;
}

bool refuse_unless_json(const httplib::Request& req, httplib::Response& res,
                        std::string_view accepted) {
  const std::string* value = header_value(req, kContentType);
  if (!value || is_json_media_type(*value)) return false;
  std::string type = *value;
  const std::size_t begin = type.find_first_not_of(" \t");
  type = begin == std::string::npos ? std::string() : type.substr(begin);
  if (type.size() > 100) type = type.substr(0, 100) + "...";
  write_error(res, 415, "unsupported_media_type",
              "send the body as " + std::string(accepted) + ", not " +
                  (type.empty() ? std::string("an empty Content-Type") : type));
  return true;
}

// A POST of an application/x-www-form-urlencoded body.
static bool is_form_post(const httplib::Request& req) {
  if (req.method != "POST") return false;
  const std::string* value = header_value(req, kContentType);
  return value != nullptr && is_form_media_type(*value);
}

// An HTML form of a console (webhooks::console: sign-in, sign-out) posted to a path under
// /console/, or with Bodies::json_or_form any form POST: the non-JSON bodies a JSON server takes.
static bool is_accepted_form(const httplib::Request& req, Bodies bodies) {
  return is_form_post(req) &&
         (bodies == Bodies::json_or_form || req.path.starts_with(kConsoleFormPrefix));
}

void limit_request_bodies(httplib::Server& server, std::size_t limit,
                          httplib::Server::HandlerWithResponse then, Bodies bodies) {
  server.set_payload_max_length(limit);
  std::shared_ptr<Traffic> traffic = track(server);
  server.set_pre_routing_handler([then = std::move(then), traffic, bodies](
                                     const httplib::Request& req, httplib::Response& res) {
    if (!admit(*traffic)) {
      // A plain answer: once stopped, cpp-httplib skips content providers (close_after's), and
      // closes the connection after this answer; a request still read from it meets this.
      write_error(res, 503, "server_stopping", "the server is stopping; retry");
      res.set_header("Retry-After", "1");
      return HandlerResponse::Handled;
    }
    if (guard_body(req, res) == HandlerResponse::Handled) return HandlerResponse::Handled;
    if (then && then(req, res) == HandlerResponse::Handled) {
      return has_unread_body(req) ? close_after(req, res) : HandlerResponse::Handled;
    }
    // A path id or query filter the database cannot hold as text: PostgreSQL refused it and
    // the request was answered 503 storage_unavailable (Retry-After: 1), a client error
    // retried for ever (GET /orders/%ff, GET /v1/events?type=%ff).
    const bool json = bodies != Bodies::any;
    if (json && !storable_target(req)) {
      write_error(res, 400, "invalid_request",
                  "the request path and query parameters must be UTF-8 without NUL bytes, "
                  "after percent-decoding");
      return has_unread_body(req) ? close_after(req, res) : HandlerResponse::Handled;
    }
    if (json && (req.method == "POST" || req.method == "PUT" || req.method == "PATCH") &&
        !is_accepted_form(req, bodies) &&
        refuse_unless_json(req, res,
                           bodies == Bodies::json_or_form
                               ? "application/json or application/x-www-form-urlencoded"
                               : "application/json")) {
      return has_unread_body(req) ? close_after(req, res) : HandlerResponse::Handled;
    }
    return HandlerResponse::Unhandled;
  });
  // httplib answers a Content-Length over the limit with an empty 413 after discarding the body
  // through a fixed buffer (so the client, still sending, reads the answer); it answers an
  // unknown route 404 and a malformed request 400, all empty. Each gets a JSON error body; an
  // answer with a body (set_content or refuse()'s content provider) is left as it is.
  server.set_error_handler([limit](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.content_provider_) return;
    write_error(res, res.status, error_code_for(res.status),
                res.status == 413   ? "the body is larger than " + std::to_string(limit) + " bytes"
                : res.status == 404 ? std::string("no such route")
                                    : std::string("the request could not be served"));
    // cpp-httplib fills the addresses only once it has parsed the request. It could not (an
    // unknown or lower-case method, another HTTP version, a header line over 8 KiB, bare LF line
    // ends, a request line over 8 KiB: 414), so where its body ends is unknown: close after this.
    if (req.remote_addr.empty()) close_after(req, res);
  });
  server.set_logger([](const httplib::Request&, const httplib::Response&) { answered(); });
}

void stop_server(httplib::Server& server, int port) {
  if (auto* ours = dynamic_cast<Server*>(&server)) {
    // The loop knows every connection: it refuses what comes from now on, waits for the answers
    // under way (at most kKeepAliveTimeout), keeps the rest open for the drain, then closes them.
    const std::shared_ptr<detail::EventLoops> loop = ours->current_loop();
    if (!loop) {
      server.stop();
      return;
    }
    std::thread stopping([&] {
      loop->stop(ours->tuning().stop_drain,
                 std::chrono::duration_cast<std::chrono::milliseconds>(kKeepAliveTimeout));
    });
    while (!loop->stopping()) std::this_thread::yield();
    server.stop();  // closes the listening socket, after the loop started refusing
    stopping.join();
    return;
  }
  std::shared_ptr<Traffic> traffic;
  {
    std::lock_guard lock(traffic_mutex);
    if (const auto it = traffic_of.find(&server); it != traffic_of.end()) traffic = it->second;
  }
  if (traffic) traffic->stopping.store(true);
  server.stop();
  if (!traffic) return;
  // Half-closing a connection makes cpp-httplib drop the answer it has yet to write, so the
  // requests in flight finish first. A count the logger missed is waited for no longer than an
  // idle connection would have kept the server anyway.
  const auto deadline = std::chrono::steady_clock::now() + kKeepAliveTimeout;
  while (traffic->in_flight.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  detail::half_close_connections(port);
}

}  // namespace webhooks::http
