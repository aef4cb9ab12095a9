#include "webhooks/receiver/http_server.h"

#include "webhooks/idempotency/answers.h"

namespace webhooks::receiver {
namespace {

template <typename H>
void mount_any(http::Server& server, const std::string& route, Receiver& receiver, H handler) {
  http::limit_request_bodies(server, receiver.config().max_body_bytes);
  server.Post(route, [&receiver, handler = std::move(handler)](const httplib::Request& req,
                                                               httplib::Response& res) {
    if (http::refuse_unless_json(req, res)) return;
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
