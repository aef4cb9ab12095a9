#include <nlohmann/json.hpp>

#include "store/delivery_control_columns.h"
#include "store/event_types_column.h"
#include "store/store_sql.h"
#include "webhooks/json_parse.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {
namespace detail {

std::string types_json(const std::vector<std::string>& types) {
  return nlohmann::json(types).dump();
}

std::vector<std::string> parse_types(const std::string& text) {
  std::vector<std::string> types;
  const auto parsed = parse_json_or_discarded(text);
  if (!parsed.is_array()) return types;
  for (const auto& entry : parsed) {
    if (entry.is_string()) types.push_back(entry.get<std::string>());
  }
  return types;
}

}  // namespace detail

using detail::parse_types;
using detail::types_json;
namespace sql = detail::sql;
namespace {

std::optional<UnixMillis> optional_time(const db::Rows& rows, std::size_t row, std::size_t col) {
  if (rows.is_null(row, col)) return std::nullopt;
  return rows.integer(row, col);
}

Endpoint endpoint_from(const db::Rows& rows, std::size_t r) {
  Endpoint e;
  e.id = rows.text(r, 0);
  e.merchant_id = rows.text(r, 1);
  e.url = rows.text(r, 2);
  e.event_types = parse_types(rows.text(r, 3));
  e.description = rows.text(r, 4);
  e.enabled = rows.integer(r, 5) != 0;
  e.disabled_reason = rows.text(r, 6);
  e.failing_since = optional_time(rows, r, 7);
  e.created_at = rows.integer(r, 8);
  e.updated_at = rows.integer(r, 9);
  e.signing = parse_signing_scheme(rows.text(r, 10)).value_or(SigningScheme::v1);
  e.control = detail::control_from(rows, r, 11);
  return e;
}

void load_secrets(db::Transaction& tx, Endpoint& endpoint) {
  const db::Rows rows = tx.exec(sql::kSelectSecrets, {endpoint.id});
  for (std::size_t r = 0; r < rows.size(); ++r) {
    endpoint.secrets.push_back({rows.text(r, 0), rows.integer(r, 1), optional_time(rows, r, 2)});
  }
}

db::Param time_param(const std::optional<UnixMillis>& t) {
  if (t) return db::Param(std::int64_t{*t});
  return db::Param(nullptr);
}

}  // namespace

Store::Store(std::shared_ptr<db::Database> db) : db_(std::move(db)) {}

void Store::create_endpoint(const Endpoint& e) {
  const std::string types = types_json(e.event_types);
  db_->transact([&](db::Transaction& tx) {
    const db::Param reason = e.enabled ? db::Param(nullptr) : db::Param(e.disabled_reason);
    const std::string signing(to_string(e.signing));
    std::vector<db::Param> params = {e.id,
                                     e.merchant_id,
                                     e.url,
                                     types,
                                     e.description,
                                     std::int64_t{e.enabled ? 1 : 0},
                                     reason,
                                     time_param(e.failing_since),
                                     std::int64_t{e.created_at},
                                     std::int64_t{e.updated_at},
                                     signing};
    const detail::ControlColumns control(e.control);
    for (const db::Param& p : control.params()) params.push_back(p);
    tx.exec(sql::kInsertEndpoint, params);
    for (const EndpointSecret& s : e.secrets) {
      tx.exec(sql::kInsertSecret,
              {e.id, s.secret, std::int64_t{s.created_at}, time_param(s.expires_at)});
    }
  });
}

std::optional<Endpoint> Store::find_endpoint(const std::string& id) {
  std::optional<Endpoint> found;
  db_->transact([&](db::Transaction& tx) {
    const db::Rows rows = tx.exec(sql::kSelectEndpoint, {id});
    if (rows.empty()) return;
    found = endpoint_from(rows, 0);
    load_secrets(tx, *found);
  });
  return found;
}

std::vector<Endpoint> Store::list_endpoints(const std::string& merchant_id) {
  std::vector<Endpoint> endpoints;
  db_->transact([&](db::Transaction& tx) {
    const db::Rows rows = tx.exec(sql::kSelectEndpoints, {merchant_id});
    for (std::size_t r = 0; r < rows.size(); ++r) {
      endpoints.push_back(endpoint_from(rows, r));
      load_secrets(tx, endpoints.back());
    }
  });
  return endpoints;
}

bool Store::update_endpoint(const Endpoint& e, UnixMillis now) {
  const std::string types = types_json(e.event_types);
  std::vector<db::Param> params = {e.id, e.url, types, e.description, std::int64_t{now}};
  const detail::ControlColumns control(e.control);
  for (const db::Param& p : control.params()) params.push_back(p);
  bool found = false;
  db_->transact([&](db::Transaction& tx) {
    found = tx.exec(sql::kUpdateEndpoint, params).affected() > 0;
    if (found && e.control.ordering != Ordering::fifo) tx.exec(sql::kReleaseSequences, {e.id});
  });
  return found;
}

bool Store::delete_endpoint(const std::string& id, UnixMillis now) {
  bool deleted = false;
  db_->transact([&](db::Transaction& tx) {
    tx.exec(sql::kKillEndpointTasks, {id, std::int64_t{now}});
    tx.exec(sql::kDeleteSecrets, {id});
    deleted = tx.exec(sql::kDeleteEndpoint, {id}).affected() > 0;
  });
  return deleted;
}

bool Store::set_enabled(const std::string& id, bool enabled, const std::string& reason,
                        UnixMillis now) {
  bool found = false;
  db_->transact([&](db::Transaction& tx) {
    found = (enabled ? tx.exec(sql::kEnableEndpoint, {id, std::int64_t{now}})
                     : tx.exec(sql::kDisableEndpoint, {id, reason, std::int64_t{now}}))
                .affected() > 0;
    if (found) tx.exec(enabled ? sql::kUnparkEndpointTasks : sql::kParkEndpointTasks, {id});
  });
  return found;
}

bool Store::rotate_secret(const std::string& id, const std::string& secret,
                          UnixMillis old_expires_at, UnixMillis now) {
  bool found = false;
  db_->transact([&](db::Transaction& tx) {
    if (tx.exec(sql::kTouchEndpoint, {id, std::int64_t{now}}).affected() == 0) return;
    found = true;
    tx.exec(sql::kExpireSecrets, {id, std::int64_t{old_expires_at}});
    tx.exec(sql::kDeleteSecret, {id, secret});
    tx.exec(sql::kInsertSecret, {id, secret, std::int64_t{now}, nullptr});
  });
  return found;
}

bool Store::rotate_keys(const std::string& id, const std::vector<std::string>& keys,
                        SigningScheme signing, UnixMillis old_expires_at, UnixMillis now) {
  bool found = false;
  db_->transact([&](db::Transaction& tx) {
    const std::string scheme(to_string(signing));
    if (tx.exec(sql::kSetSigning, {id, scheme, std::int64_t{now}}).affected() == 0) return;
    found = true;
    tx.exec(sql::kExpireSecrets, {id, std::int64_t{old_expires_at}});
    for (const std::string& key : keys) {
      tx.exec(sql::kDeleteSecret, {id, key});
      tx.exec(sql::kInsertSecret, {id, key, std::int64_t{now}, nullptr});
    }
  });
  return found;
}

std::int64_t Store::count_disabled_endpoints() {
  return db_->exec(sql::kCountDisabled).integer(0, 0);
}

}  // namespace webhooks::publisher
