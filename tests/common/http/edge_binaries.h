// The server binaries under the HTTP edge contract (edge_binaries_test.cc, issue 25): how each is
// started on a fresh SQLite file, a POST route that takes a JSON body and a GET route, valid
// requests for them as raw bytes, and the checks of an error answer (docs/security.md, "What the
// HTTP edge refuses").
#pragma once

#include <zlib.h>

#include <catch2/catch.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "raw_clients.h"
#include "webhooks/clock.h"
#include "webhooks/launcher/child_process.h"
#include "webhooks/signer.h"

namespace webhooks::test::edge {

inline const std::string kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

struct Target {
  std::string name;  // the executable in build/bin
  std::vector<std::string> args;
  std::string post_path;
  std::string auth;  // header lines (with CRLF) a POST needs to reach its handler
  std::string get_path;
  std::string created;   // the status of a valid new POST
  std::string id_field;  // the created resource's id in the answer ("" for merchant-receiver)
  std::string key_header;
  bool budget_flag = false;  // takes --max-buffered-bytes
};

inline Target target(const std::string& name, const std::string& dir) {
  if (name == "webhooks-publisherd") {
    return {name,         {"--db", dir + "/publisher.db", "--admin-token", "tok"},
            "/v1/events", "Authorization: Bearer tok\r\n",
            "/healthz",   "202",
            "event_id",   "Idempotency-Key",
            true};
  }
  if (name == "orders-api") {
    return {
        name,
        {"--db", dir + "/orders.db", "--api-key", "k1:m1", "--partner-url", "http://127.0.0.1:9"},
        "/orders",
        "Authorization: Bearer k1\r\n",
        "/healthz",
        "201",
        "id",
        "Idempotency-Key",
        true};
  }
  if (name == "merchant-receiver") {
    return {name,        {"--db", dir + "/merchant.db", "--secret", kSecret},
            "/webhooks", "",
            "/handled",  "200",
            "",          "webhook-id",
            true};
  }
  return {name, {"--db", dir + "/partner.db"}, "/transfers", "", "/healthz", "201",
          "id", "X-Idempotency-Key",           false};
}

// The binary on 127.0.0.1, port 0, its output files in `dir`; stopped (SIGTERM) when destroyed.
struct Started {
  Started(const Target& t, const std::string& dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--listen", "127.0.0.1:0"};
    args.insert(args.end(), t.args.begin(), t.args.end());
    args.insert(args.end(), extra.begin(), extra.end());
    process = std::make_unique<launcher::ChildProcess>(t.name, args, dir);
    port = process->wait_listening();
  }
  std::unique_ptr<launcher::ChildProcess> process;
  int port = 0;
};

inline std::string head(const std::string& method, const std::string& path,
                        const std::string& fields) {
  return method + " " + path + " HTTP/1.1\r\n" + fields + "\r\n";
}

inline std::string get(const Target& t) { return head("GET", t.get_path, "Host: a\r\n"); }

// A POST its handler accepts as new for a fresh `key` (Idempotency-Key, X-Idempotency-Key or
// webhook-id, signed), its JSON body followed by `pad` spaces, with `extra` header lines.
inline std::string valid_post(const Target& t, const std::string& key, std::size_t pad = 0,
                              const std::string& extra = "") {
  std::string body = R"({"amount":1000,"currency":"EUR","reference":"inv-1"})";
  std::string fields = "Host: a\r\nContent-Type: application/json\r\n" + t.auth + extra;
  if (t.name == "webhooks-publisherd") {
    body = R"({"merchant_id":"m1","type":"order.created","data":{"n":1}})";
  } else if (t.name == "merchant-receiver") {
    body = R"({"id":")" + key +
           R"(","type":"order.created","timestamp":"2026-12-04T00:00:00Z","data":{}})";
  } else if (t.name == "payout-partner") {
    body = R"({"amount":1000,"currency":"EUR","destination":"acct_1"})";
  }
  body.append(pad, ' ');
  fields += t.key_header + ": " + key + "\r\n";
  if (t.name == "merchant-receiver") {
    const std::int64_t ts = system_clock().now_seconds();
    fields += "webhook-timestamp: " + std::to_string(ts) +
              "\r\nwebhook-signature: " + Signer(Secret::parse(kSecret)).sign(key, ts, body) +
              "\r\n";
  }
  return head("POST", t.post_path,
              fields + "Content-Length: " + std::to_string(body.size()) + "\r\n") +
         body;
}

// `request` with the line "NAME: VALUE\r\n" that starts with `line` sent twice (its copy right
// after it), or followed by `other` instead when given.
inline std::string line_twice(std::string request, const std::string& line,
                              const std::string& other = "") {
  const std::size_t at = request.find("\r\n" + line);
  REQUIRE(at != std::string::npos);
  const std::size_t end = request.find("\r\n", at + 2);
  const std::string copy = other.empty() ? request.substr(at + 2, end - at - 2) : other;
  request.insert(end + 2, copy + "\r\n");
  return request;
}

// HTTP/1.x status lines in what was read (an error message that names a version is not one).
inline std::size_t answers_in(const std::string& transcript) {
  static const std::regex status_line("HTTP/1\\.[01] [0-9]{3} ");
  return static_cast<std::size_t>(
      std::distance(std::sregex_iterator(transcript.begin(), transcript.end(), status_line),
                    std::sregex_iterator()));
}

// "201" of "HTTP/1.1 201 Created ..."; "" when nothing was answered.
inline std::string status_of(const std::string& answer) {
  return answer.size() < 12 ? "" : answer.substr(9, 3);
}

// The value of header `name` (as the server spells it) in the first answer's head, or "".
inline std::string header_of(const std::string& answer, const std::string& name) {
  const std::size_t end = answer.find("\r\n\r\n");
  const std::size_t at = answer.find("\r\n" + name + ": ");
  if (at == std::string::npos || at >= end) return "";
  const std::size_t from = at + name.size() + 4;
  return answer.substr(from, answer.find("\r\n", from) - from);
}

inline nlohmann::json json_of(const std::string& answer) {
  return nlohmann::json::parse(body_of(answer), nullptr, false);
}

struct Transcript {
  std::string bytes;
  bool closed = false;
};

// `data` on a new connection (then, with `half_close`, SHUT_WR), read until the server closes.
inline Transcript transcript_of(int port, const std::string& data, bool half_close = false) {
  Transcript t;
  t.bytes = send_until_close(port, data, t.closed, half_close);
  return t;
}

// One error answer, `status` ("400 Bad Request"), the project's JSON error body with `code`,
// `Connection: close`, and the connection closed after it.
inline void expect_error(const Transcript& got, const std::string& status,
                         const std::string& code) {
  INFO(got.bytes.substr(0, 400));
  CHECK(got.closed);
  CHECK(got.bytes.rfind("HTTP/1.1 " + status + "\r\n", 0) == 0);
  CHECK(answers_in(got.bytes) == 1);
  CHECK(header_of(got.bytes, "Connection") == "close");
  CHECK(header_of(got.bytes, "Content-Type") == "application/json");
  const nlohmann::json body = json_of(got.bytes);
  const bool shaped =
      body.is_object() && body.size() == 1 && body.contains("error") && body["error"].is_object();
  CHECK(shaped);  // {"error":{"code":...,"message":...}}
  if (!shaped) return;
  CHECK(body["error"].value("code", "") == code);
  CHECK(!body["error"].value("message", "").empty());
}

// `mib` MiB of zeros compressed: gzip (window_bits 31) or the zlib format of HTTP's "deflate"
// (15), about 1 KB a MiB.
inline std::string zero_bomb(int window_bits, int mib) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY) ==
          Z_OK);
  const std::string zeros(1 << 20, '\0');
  std::string out;
  char buffer[64 * 1024];
  for (int i = 0; i < mib; ++i) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
    z.avail_in = static_cast<uInt>(zeros.size());
    const int flush = i + 1 == mib ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buffer);
      z.avail_out = sizeof buffer;
      deflate(&z, flush);
      out.append(buffer, sizeof buffer - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

}  // namespace webhooks::test::edge
