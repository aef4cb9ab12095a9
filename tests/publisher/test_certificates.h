// Certificates for TLS tests, made with OpenSSL at run time (nothing checked in expires): a CA,
// a server certificate for 127.0.0.1 and a client certificate, all signed by the CA, as PEM
// files in a directory.
#pragma once

#include <string>

namespace webhooks::test {

struct TestCertificates {
  std::string ca_file;                          // the CA's certificate
  std::string server_cert, server_key;          // files: CN and subjectAltName IP 127.0.0.1
  std::string client_cert_pem, client_key_pem;  // the client's, as text
  std::string other_client_cert_pem, other_client_key_pem;  // self-signed: not the CA's
};

// Writes the files into `dir` (which must exist). Throws std::runtime_error if OpenSSL fails.
TestCertificates make_test_certificates(const std::string& dir);

}  // namespace webhooks::test
