// An HTTP POST whose body is sent with Transfer-Encoding: chunked (httplib does so for a content
// provider without a length), for tests of servers that must refuse such bodies.
#pragma once

#include <httplib.h>

#include <string>

namespace webhooks::test {

inline httplib::Result post_chunked(httplib::Client& client, const std::string& path,
                                    const httplib::Headers& headers, const std::string& body) {
  return client.Post(
      path.c_str(), headers,
      [&body](std::size_t, httplib::DataSink& sink) {
        sink.write(body.data(), body.size());
        sink.done();
        return true;
      },
      "application/json");
}

}  // namespace webhooks::test
