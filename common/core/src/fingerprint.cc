#include "webhooks/fingerprint.h"

#include <openssl/evp.h>

#include "webhooks/canonical_json.h"
#include "webhooks/error.h"

namespace webhooks {

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    throw Error(ErrorCode::crypto, "SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xF]);
  }
  return out;
}

std::string canonical_request_fingerprint(std::string_view method, std::string_view path,
                                          std::string_view canonical_body) {
  std::string input;
  input.reserve(method.size() + path.size() + canonical_body.size() + 2);
  input.append(method).append(1, '\n').append(path).append(1, '\n').append(canonical_body);
  return sha256_hex(input);
}

std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body) {
  return canonical_request_fingerprint(method, path, body.empty() ? "" : canonicalize_json(body));
}

}  // namespace webhooks
