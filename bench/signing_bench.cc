// Signing and verification throughput beside raw OpenSSL HMAC-SHA256 (a prepared EVP_MAC_CTX
// duplicated per message) on the same input in the same run; canonical-JSON fingerprints per
// second.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstdio>
#include <string>

#include "bench_util.h"
#include "webhooks/ed25519.h"
#include "webhooks/fingerprint.h"
#include "webhooks/signer.h"
#include "webhooks/verifier.h"

namespace {

volatile std::size_t g_sink = 0;

// The baseline: what any HMAC-SHA256 signer must at least do.
class RawHmac {
 public:
  explicit RawHmac(const webhooks::Secret& secret) {
    mac_ = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    ctx_ = EVP_MAC_CTX_new(mac_);
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                           OSSL_PARAM_construct_end()};
    EVP_MAC_init(ctx_, secret.key().data(), secret.key().size(), params);
  }
  ~RawHmac() {
    EVP_MAC_CTX_free(ctx_);
    EVP_MAC_free(mac_);
  }
  void mac(const std::string& content, unsigned char* out) const {
    EVP_MAC_CTX* ctx = EVP_MAC_CTX_dup(ctx_);
    std::size_t written = 0;
    EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(content.data()), content.size());
    EVP_MAC_final(ctx, out, &written, 32);
    EVP_MAC_CTX_free(ctx);
  }

 private:
  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* ctx_ = nullptr;
};

void bench_body(std::size_t size) {
  const webhooks::Secret secret = webhooks::Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  const webhooks::Signer signer(secret);
  const webhooks::Verifier verifier({secret});
  const RawHmac raw(secret);
  const std::string id = "0190a5d4-ac96-774b-bcce-b302099a8057";
  const std::int64_t ts = 1700000000;
  const std::string body = "{\"data\":\"" + std::string(size - 11, 'x') + "\"}";
  const std::string content = webhooks::signed_content(id, ts, body);
  const std::string header = signer.sign(id, ts, body);
  const std::string ts_text = std::to_string(ts);
  unsigned char expected[32];
  raw.mac(content, expected);

  const auto sign = bench::paired([&] { g_sink = g_sink + signer.sign(id, ts, body).size(); },
                                  [&] {
                                    unsigned char out[32];
                                    raw.mac(content, out);
                                    g_sink = g_sink + out[0];
                                  });
  const auto verify = bench::paired(
      [&] {
        g_sink = g_sink +
                 static_cast<std::size_t>(verifier.verify({id, ts_text, header}, body, ts).status);
      },
      [&] {
        unsigned char out[32];
        raw.mac(content, out);
        g_sink = g_sink + static_cast<std::size_t>(CRYPTO_memcmp(out, expected, 32));
      });
  std::printf("%-6s sign     ours %10.0f/s   raw HMAC %10.0f/s   ratio %.2f (target >= 0.90)\n",
              size == 1024 ? "1 KiB" : "64 KiB", sign.ours, sign.baseline, sign.ratio);
  std::printf("%-6s verify   ours %10.0f/s   raw HMAC %10.0f/s   ratio %.2f (target >= 0.90)\n",
              size == 1024 ? "1 KiB" : "64 KiB", verify.ours, verify.baseline, verify.ratio);
}

// Ed25519 (v1a) beside v1's HMAC over the same 1 KiB body: a signature with a parsed key (the
// daemon parses an endpoint's keys once per batch, EndpointSigners), and parse + sign (one
// delivery alone in its batch).
void bench_ed25519() {
  const std::string key_text = webhooks::Ed25519SigningKey::generate().to_string();
  const webhooks::Ed25519SigningKey key = webhooks::Ed25519SigningKey::parse(key_text);
  const webhooks::Signer hmac(webhooks::Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
  const std::string id = "0190a5d4-ac96-774b-bcce-b302099a8057";
  const std::string body = "{\"data\":\"" + std::string(1024 - 11, 'x') + "\"}";
  const auto hmac_sign = [&] { g_sink = g_sink + hmac.sign(id, 1700000000, body).size(); };
  const auto sign =
      bench::paired([&] { g_sink = g_sink + key.sign(id, 1700000000, body).size(); }, hmac_sign);
  std::printf("1 KiB  sign v1a          Ed25519 %8.0f/s   v1 HMAC %10.0f/s   ratio %.3f\n",
              sign.ours, sign.baseline, sign.ratio);
  const auto parse_sign = bench::paired(
      [&] {
        g_sink =
            g_sink + webhooks::Ed25519SigningKey::parse(key_text).sign(id, 1700000000, body).size();
      },
      hmac_sign);
  std::printf("1 KiB  parse + sign v1a  Ed25519 %8.0f/s   v1 HMAC %10.0f/s   ratio %.3f\n",
              parse_sign.ours, parse_sign.baseline, parse_sign.ratio);
}

void bench_fingerprint() {
  std::string body =
      "{\"amount\":125000,\"currency\":\"EUR\",\"reference\":\"order-2026-11-30-0001\","
      "\"customer\":{\"id\":\"cus_01890a5dac96774b\",\"email\":\"ana@example.com\","
      "\"name\":\"Ana P\\u00e9rez\"},\"items\":[";
  for (int i = 0; body.size() < 1000; ++i) {
    body += (i ? "," : "") + std::string("{\"sku\":\"sku-") + std::to_string(i) +
            "\",\"quantity\":2,\"unit_amount\":1999.0}";
  }
  body += "]}";
  std::vector<double> rates;
  for (int i = 0; i < 5; ++i) {
    rates.push_back(bench::rate(
        [&] { g_sink = g_sink + webhooks::request_fingerprint("POST", "/orders", body).size(); },
        std::chrono::milliseconds(300)));
  }
  std::printf("fingerprint (canonical JSON + SHA-256) of a %zu-byte order body: %.0f/s\n",
              body.size(), bench::median(rates));
}

}  // namespace

int main() {
  std::printf("== signing: Standard Webhooks v1 HMAC-SHA256, medians of 7 alternating rounds ==\n");
  bench_body(1024);
  bench_body(64 * 1024);
  bench_ed25519();
  bench_fingerprint();
  return 0;
}
