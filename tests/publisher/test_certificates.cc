#include "test_certificates.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <memory>
#include <stdexcept>

namespace webhooks::test {
namespace {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Cert = std::unique_ptr<X509, decltype(&X509_free)>;

Key new_key() {
  Key key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!key) throw std::runtime_error("EVP_EC_gen failed");
  return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) throw std::runtime_error("X509V3_EXT_conf_nid failed");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `cn`, signed by `issuer_key` (as `issuer`, or itself when null).
Cert make_cert(EVP_PKEY* key, const char* cn, X509* issuer, EVP_PKEY* issuer_key, long serial,
               bool ca, const char* alt_name) {
  Cert cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7 * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  add_extension(cert.get(), signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (alt_name != nullptr) add_extension(cert.get(), signer, NID_subject_alt_name, alt_name);
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) {
    throw std::runtime_error("X509_sign failed");
  }
  return cert;
}

std::string pem(X509* cert) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TestCertificates make_test_certificates(const std::string& dir) {
  const Key ca_key = new_key(), server_key = new_key(), client_key = new_key(),
            other_key = new_key();
  const Cert ca =
      make_cert(ca_key.get(), "webhooks test CA", nullptr, ca_key.get(), 1, true, nullptr);
  const Cert server =
      make_cert(server_key.get(), "127.0.0.1", ca.get(), ca_key.get(), 2, false, "IP:127.0.0.1");
  const Cert client =
      make_cert(client_key.get(), "publisher", ca.get(), ca_key.get(), 3, false, nullptr);
  const Cert other =
      make_cert(other_key.get(), "stranger", nullptr, other_key.get(), 4, false, nullptr);
  TestCertificates out;
  out.ca_file = write(dir + "/ca.pem", pem(ca.get()));
  out.server_cert = write(dir + "/server.pem", pem(server.get()));
  out.server_key = write(dir + "/server-key.pem", pem(server_key.get()));
  out.client_cert_pem = pem(client.get());
  out.client_key_pem = pem(client_key.get());
  out.other_client_cert_pem = pem(other.get());
  out.other_client_key_pem = pem(other_key.get());
  return out;
}

}  // namespace webhooks::test
