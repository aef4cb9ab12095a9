// orders-api's console (docs/orders-api.md, "Console"): a merchant signs in with its API key and
// sees its own recent idempotency keys (state, route, outcome, counted replays, 409s and 422s),
// filtered by state and created time, and one key's whole record. Server-rendered HTML on
// webhooks::console (sessions, CSRF, layout, escaping, compiled-in assets); read-only.
//   GET  /console/login, POST /console/login, POST /console/logout   (webhooks::console::Sessions)
//   GET  /console?state=&since=&until=&cursor=   table#keys, newest first, 50 a page
//   GET  /console/keys/{key}                      the key's record; 404 page when it is not the
//                                                 merchant's (or unknown, or expired)
// A session is signed with a key derived from the merchant's API keys (principal = merchant id),
// so removing or changing a merchant's key signs its sessions out.
#pragma once

#include <map>
#include <string>

#include "webhooks/clock.h"
#include "webhooks/console/session.h"
#include "webhooks/http_server.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::orders {

class KeysConsole {
 public:
  // `api_keys`: API key -> merchant id (as --api-key). `store` and `clock` must outlive it.
  // Sign-out revokes a session in `db`'s orders_revoked_sessions (schema/orders_api/), which must
  // outlive it.
  KeysConsole(std::map<std::string, std::string, std::less<>> api_keys, idempotency::Store& store,
              db::Database& db, const Clock& clock, bool behind_tls_proxy = false);

  // Registers the routes above on `server`.
  void mount(http::Server& server);
  // The failed-authentication throttle of the console's sign-in, which the API's bearer check
  // shares (webhooks/console/throttle.h).
  console::FailureThrottle& throttle() const { return sessions_.throttle(); }

 private:
  void list_page(const httplib::Request& req, httplib::Response& res);
  void key_page(const httplib::Request& req, httplib::Response& res);

  std::map<std::string, std::string, std::less<>> api_keys_;
  idempotency::Store& store_;
  const Clock& clock_;
  console::SqlRevocations revocations_;
  console::Sessions sessions_;
};

}  // namespace webhooks::orders
