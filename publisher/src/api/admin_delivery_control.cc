#include "api/admin_delivery_control.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <optional>

#include "api/admin_json.h"

namespace webhooks::publisher::detail {
namespace {

using nlohmann::json;

constexpr int kMaxRateLimit = 100'000;
constexpr std::size_t kMaxHeaders = 32;
constexpr std::size_t kMaxHeaderBytes = 4096;      // one header's name and value
constexpr std::size_t kMaxAllHeaderBytes = 8192;   // all of them: receivers cap request heads
constexpr std::size_t kMaxCredentialBytes = 4096;  // a token, username or password

bool refuse(httplib::Response& res, const std::string& message) {
  fail(res, 400, "invalid_request", message);
  return false;
}

bool read_rate_limit(const json& value, DeliveryControl& control, httplib::Response& res) {
  if (value.is_null()) {
    control.rate_limit.reset();
    return true;
  }
  const bool in_range = value.is_number_unsigned()
                            ? value.get<std::uint64_t>() >= 1 &&
                                  value.get<std::uint64_t>() <= std::uint64_t{kMaxRateLimit}
                            : value.is_number_integer() && value.get<std::int64_t>() >= 1 &&
                                  value.get<std::int64_t>() <= kMaxRateLimit;
  if (!in_range) {
    return refuse(res, "rate_limit must be a whole number of deliveries per second from 1 to " +
                           std::to_string(kMaxRateLimit) + ", or null for none");
  }
  control.rate_limit = static_cast<int>(value.get<std::int64_t>());
  return true;
}

bool read_headers(const json& value, DeliveryControl& control, httplib::Response& res) {
  if (value.is_null()) {
    control.headers.clear();
    return true;
  }
  if (!value.is_object()) return refuse(res, "headers must be an object of header: value");
  if (value.size() > kMaxHeaders) {
    return refuse(res, "headers holds at most " + std::to_string(kMaxHeaders) + " headers");
  }
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> seen;
  std::size_t total = 0;
  for (const auto& [name, v] : value.items()) {
    if (!v.is_string())
      return refuse(res, "headers: the value of \"" + name + "\" must be a string");
    const std::string& text = v.get_ref<const std::string&>();
    if (name.size() + text.size() > kMaxHeaderBytes) {
      return refuse(res, "headers: \"" + name + "\" is longer than 4096 bytes");
    }
    total += name.size() + text.size();
    if (total > kMaxAllHeaderBytes) {
      return refuse(res, "headers: more than 8192 bytes of names and values in all");
    }
    if (std::string problem = check_static_header(name, text); !problem.empty()) {
      return refuse(res, "headers: " + problem);
    }
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::find(seen.begin(), seen.end(), lower) != seen.end()) {
      return refuse(res, "headers: \"" + name + "\" is given twice (names ignore case)");
    }
    seen.push_back(lower);
    headers.emplace_back(name, text);
  }
  control.headers = std::move(headers);
  return true;
}

// A credential's part: a non-empty string of visible ASCII and spaces (it goes in a header).
bool credential(const json& auth, const char* field, std::string& out, httplib::Response& res) {
  const auto it = auth.find(field);
  bool ok = it != auth.end() && it->is_string() && !it->get_ref<const std::string&>().empty() &&
            it->get_ref<const std::string&>().size() <= kMaxCredentialBytes;
  if (ok) {
    for (const char c : it->get_ref<const std::string&>()) {
      ok = ok && static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7F;
    }
  }
  if (!ok) {
    return refuse(res,
                  std::string("auth.") + field + " must be 1 to 4096 printable ASCII characters");
  }
  out = it->get<std::string>();
  return true;
}

bool read_auth(const json& value, DeliveryControl& control, httplib::Response& res) {
  if (value.is_null()) {
    control.auth = {};
    return true;
  }
  const auto type_member = value.is_object() ? value.find("type") : value.end();
  const std::string type =
      value.is_object() && type_member != value.end() && type_member->is_string()
          ? type_member->get<std::string>()
          : std::string();
  EndpointAuth auth;
  if (type == "bearer") {
    auth.type = EndpointAuth::Type::bearer;
    if (!credential(value, "token", auth.token, res)) return false;
    // RFC 6750, section 2.1: a b64token has no space (a padded token would reach the endpoint
    // as another one, or as none once a proxy trims it).
    if (auth.token.find(' ') != std::string::npos) {
      return refuse(res, "auth.token must not contain spaces (RFC 6750 b64token)");
    }
  } else if (type == "basic") {
    auth.type = EndpointAuth::Type::basic;
    if (!credential(value, "username", auth.username, res) ||
        !credential(value, "password", auth.password, res)) {
      return false;
    }
    if (auth.username.find(':') != std::string::npos) {
      return refuse(res, "auth.username must not contain ':' (RFC 7617)");
    }
  } else {
    return refuse(
        res,
        R"(auth must be {"type":"bearer","token"}, {"type":"basic","username","password"} or null)");
  }
  control.auth = std::move(auth);
  return true;
}

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

// The pair as stored: the certificate chain and the key re-encoded from what loaded, so nothing
// else given with them (a key inside the certificate's text, junk after it) is kept or shown.
// std::nullopt with `problem` set when they do not load or do not belong together.
struct KeyPair {
  std::string certificate, key;
};
std::optional<KeyPair> load_key_pair(const std::string& certificate, const std::string& key,
                                     std::string& problem) {
  if (certificate.find("PRIVATE KEY") != std::string::npos) {
    problem =
        "client_certificate must hold only certificates (PEM CERTIFICATE blocks): give the "
        "key in client_key";
    return std::nullopt;
  }
  Bio cert_bio(BIO_new_mem_buf(certificate.data(), static_cast<int>(certificate.size())), BIO_free);
  Bio key_bio(BIO_new_mem_buf(key.data(), static_cast<int>(key.size())), BIO_free);
  Bio out(BIO_new(BIO_s_mem()), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> leaf(nullptr, X509_free);
  while (X509* cert = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
    PEM_write_bio_X509(out.get(), cert);
    if (leaf) {
      X509_free(cert);
    } else {
      leaf.reset(cert);
    }
  }
  if (!leaf) {
    problem = "client_certificate is not a PEM certificate";
    return std::nullopt;
  }
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> pkey(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (!pkey) {
    problem = "client_key is not an unencrypted PEM private key";
    return std::nullopt;
  }
  if (X509_check_private_key(leaf.get(), pkey.get()) != 1) {
    problem = "client_key does not belong to client_certificate";
    return std::nullopt;
  }
  Bio key_out(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_PrivateKey(key_out.get(), pkey.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return KeyPair{bio_text(out.get()), bio_text(key_out.get())};
}

bool read_client_certificate(const json& body, const std::string& url, DeliveryControl& control,
                             httplib::Response& res) {
  const bool has_cert = body.contains("client_certificate");
  const bool has_key = body.contains("client_key");
  if (!has_cert && !has_key) return true;
  static constexpr const char* kTogether =
      "client_certificate and client_key are given together: both PEM strings, or both null to "
      "remove them";
  if (has_cert != has_key) return refuse(res, kTogether);
  const json& cert = body.at("client_certificate");
  const json& key = body.at("client_key");
  if (cert.is_null() && key.is_null()) {
    control.client_certificate.clear();
    control.client_key.clear();
    return true;
  }
  if (!cert.is_string() || !key.is_string()) return refuse(res, kTogether);
  if (!url.starts_with("https://")) {
    return refuse(res, "client_certificate needs an https:// url");
  }
  std::string problem;
  const std::optional<KeyPair> pair =
      load_key_pair(cert.get<std::string>(), key.get<std::string>(), problem);
  if (!pair) return refuse(res, problem);
  control.client_certificate = pair->certificate;
  control.client_key = pair->key;
  return true;
}

}  // namespace

bool read_delivery_control(const json& body, const std::string& url, DeliveryControl& control,
                           httplib::Response& res) {
  if (const auto it = body.find("rate_limit"); it != body.end()) {
    if (!read_rate_limit(*it, control, res)) return false;
  }
  if (const auto it = body.find("ordering"); it != body.end()) {
    // null is the default, "none", as null is for rate_limit, headers and auth.
    const auto ordering = it->is_null()     ? std::optional(Ordering::none)
                          : it->is_string() ? parse_ordering(it->get<std::string>())
                                            : std::nullopt;
    if (!ordering) return refuse(res, R"(ordering must be "none" or "fifo")");
    control.ordering = *ordering;
  }
  if (const auto it = body.find("headers"); it != body.end()) {
    if (!read_headers(*it, control, res)) return false;
  }
  if (const auto it = body.find("auth"); it != body.end()) {
    if (!read_auth(*it, control, res)) return false;
  }
  if (!read_client_certificate(body, url, control, res)) return false;
  if (!control.client_certificate.empty() && !url.starts_with("https://")) {
    return refuse(res, "an endpoint with a client_certificate needs an https:// url");
  }
  return true;
}

json delivery_control_json(const DeliveryControl& c) {
  json headers = json::object();
  for (const auto& [name, value] : c.headers) headers[name] = value;
  return {
      {"rate_limit", c.rate_limit ? json(*c.rate_limit) : json()},
      {"ordering", to_string(c.ordering)},
      {"headers", headers},
      {"auth",
       c.auth.type == EndpointAuth::Type::none ? json() : json{{"type", to_string(c.auth.type)}}},
      {"client_certificate", c.client_certificate.empty() ? json() : json(c.client_certificate)}};
}

}  // namespace webhooks::publisher::detail
