#include "console/console.h"

#include <httplib.h>

#include "console/console_pages.h"
#include "keys.h"
#include "webhooks/console/page.h"
#include "webhooks/error.h"

namespace webhooks::orders {
namespace {

using Keys = std::map<std::string, std::string, std::less<>>;

// The secret of a merchant's sessions: its API keys, in order (none: no sessions).
std::optional<std::string> merchant_secret(const Keys& keys, std::string_view merchant) {
  std::string secret;
  for (const auto& [key, owner] : keys) {
    if (owner == merchant) secret += key + '\n';
  }
  if (secret.empty()) return std::nullopt;
  return secret;
}

// The merchant of an API key; every key is compared, each in constant time.
std::optional<std::string> merchant_of(const Keys& keys, std::string_view token) {
  std::optional<std::string> merchant;
  for (const auto& [key, owner] : keys) {
    if (console::same_secret(key, token)) merchant = owner;
  }
  return merchant;
}

}  // namespace

KeysConsole::KeysConsole(Keys api_keys, idempotency::Store& store, db::Database& db,
                         const Clock& clock, bool behind_tls_proxy)
    : api_keys_(std::move(api_keys)),
      store_(store),
      clock_(clock),
      revocations_(db, "orders_revoked_sessions", clock),
      sessions_([this](std::string_view merchant) { return merchant_secret(api_keys_, merchant); },
                [this](std::string_view token) { return merchant_of(api_keys_, token); }, clock,
                console::kSessionLifetime, "orders_console") {
  sessions_.use_revocations(revocations_);
  sessions_.use_tls(behind_tls_proxy);
}

void KeysConsole::mount(http::Server& server) {
  sessions_.mount(server, kConsoleTitle);
  server.Get("/console",
             [this](const httplib::Request& req, httplib::Response& res) { list_page(req, res); });
  server.Get(R"(/console/keys/(.+))",
             [this](const httplib::Request& req, httplib::Response& res) { key_page(req, res); });
}

void KeysConsole::list_page(const httplib::Request& req, httplib::Response& res) {
  const std::optional<console::Session> session = sessions_.require(req, res);
  if (!session) return;
  const KeysFilter filter = read_filter(req);
  idempotency::ListPage page;
  std::string error = filter.error;
  try {
    // A bad filter lists nothing (not every key unfiltered), as the publisher's events page.
    if (error.empty())
      page = store_.list(merchant_scope(session->principal), filter.query, clock_.now_ms());
  } catch (const Error& e) {
    if (e.code() != ErrorCode::invalid_argument) throw;
    error = "That page link is not valid any more: start again from the first page.";
  }
  console::send_html(res, error.empty() ? 200 : 400,
                     console::render_page(
                         keys_page(session->csrf_token, session->principal, filter, page, error)));
}

void KeysConsole::key_page(const httplib::Request& req, httplib::Response& res) {
  const std::optional<console::Session> session = sessions_.require(req, res);
  if (!session) return;
  const std::string key = req.matches[1].str();
  const std::optional<idempotency::RecordView> view =
      store_.lookup(merchant_scope(session->principal), key, clock_.now_ms());
  console::send_html(res, view ? 200 : 404,
                     console::render_page(key_detail_page(session->csrf_token, key, view)));
}

}  // namespace webhooks::orders
