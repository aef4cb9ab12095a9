#include "webhooks/receiver/http_server.h"

#include "webhooks/idempotency/http.h"

namespace webhooks::receiver {
namespace {

template <typename H>
void mount_any(http::Server& server, const std::string& route, Receiver& receiver, H handler) {
  http::limit_request_bodies(server, receiver.config().max_body_bytes);
  // GitHub may send a delivery as a form (payload=<JSON>, docs/receiver.md, "GitHub").
  const bool forms = receiver.config().provider == providers::Provider::github;
  server.Post(route, [&receiver, forms, handler = std::move(handler)](const httplib::Request& req,
                                                                      httplib::Response& res) {
    if (forms && http::is_form_media_type(req.get_header_value("Content-Type"))) {
      // read as a form by Receiver::handle
    } else if (http::refuse_unless_json(
                   req, res,
                   forms ? "application/json or application/x-www-form-urlencoded"
                         : "application/json")) {
      return;
    }
    write_answer(receiver.handle(headers_of(req), req.body, handler), res);  // moved, not copied
  });
}

}  // namespace

Headers headers_of(const httplib::Request& request) { return Headers::view(request.headers); }

void write_answer(const Answer& answer, httplib::Response& response) {
  idempotency::write(answer, response);
}

void write_answer(Answer&& answer, httplib::Response& response) {
  idempotency::write(std::move(answer), response);
}

void mount(http::Server& server, const std::string& route, Receiver& receiver, Handler handler) {
  mount_any(server, route, receiver, std::move(handler));
}

void mount(http::Server& server, const std::string& route, Receiver& receiver,
           TransactionalHandler handler) {
  mount_any(server, route, receiver, std::move(handler));
}

}  // namespace webhooks::receiver
