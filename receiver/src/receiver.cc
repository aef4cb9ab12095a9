// The Receiver's construction and its two entry points; the steps are in the files
// receiver_impl.h lists.
#include "webhooks/receiver/receiver.h"

#include "receiver_impl.h"
#include "webhooks/ed25519.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/secret.h"

namespace webhooks::receiver {
namespace {

std::optional<Verifier> make_verifier(const Config& config) {
  if (config.provider != providers::Provider::standard) {
    if (!config.public_keys.empty()) {
      throw Error(ErrorCode::invalid_argument,
                  "public keys (v1a) are Standard Webhooks only, not " +
                      std::string(providers::to_string(config.provider)));
    }
    return std::nullopt;
  }
  std::vector<Secret> secrets;
  for (const std::string& text : config.secrets) secrets.push_back(Secret::parse(text));
  std::vector<Ed25519PublicKey> keys;
  for (const std::string& text : config.public_keys) keys.push_back(Ed25519PublicKey::parse(text));
  return Verifier(secrets, std::move(keys), VerifyOptions{config.tolerance, true});
}

std::shared_ptr<db::Database> migrated(std::shared_ptr<db::Database> database, const Clock& clock) {
  database->migrate({idempotency::schema()}, clock.now_ms());  // idempotency_records only
  return database;
}

// The receiver's records: its lease and TTL, transactional groups of up to 128 events with its
// lock timeout, no guard replay cache (the receiver keeps its own, `replays`), and maintenance
// every config.maintenance_interval (0: none).
idempotency::ServiceOptions idempotency_options(const Config& config) {
  idempotency::ServiceOptions options;
  options.settings = {config.lease, config.ttl};
  options.guard.group = {128, 0, config.lock_timeout};
  options.guard.replay_cache_entries = 0;
  options.maintenance_interval = config.maintenance_interval;
  return options;
}

}  // namespace

Receiver::Impl::Impl(Config c, std::shared_ptr<db::Database> database)
    : config(std::move(c)),
      clock(config.clock ? *config.clock : system_clock()),
      verifier(make_verifier(config)),
      provider_verifier(verifier ? nullptr
                                 : providers::make_provider_verifier(
                                       config.provider, config.secrets,
                                       providers::ProviderOptions{config.tolerance, true})),
      db(migrated(std::move(database), clock)),
      idempotency(db, clock, idempotency_options(config)),
      replays(config.replay_cache_entries) {
  if (config.consumer.empty()) {
    throw Error(ErrorCode::invalid_argument, "the receiver's consumer name must not be empty");
  }
}

Receiver::Receiver(Config config)
    : Receiver(config, db::Database::open(config.store, config.database)) {}

Receiver::Receiver(Config config, std::shared_ptr<db::Database> database)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(database))) {}

Receiver::~Receiver() = default;

Answer Receiver::handle(const Headers& headers, std::string_view raw_body, const Handler& handler) {
  Impl& impl = *impl_;
  Admission a;
  if (auto answer = impl.admit_or_answer(headers, raw_body, a, false)) return std::move(*answer);
  return a.durable ? impl.run_durable(a.event, a.fingerprint, handler)
                   : impl.run_in_process(a.event, a.fingerprint, handler);
}

Answer Receiver::handle(const Headers& headers, std::string_view raw_body,
                        const TransactionalHandler& handler) {
  Impl& impl = *impl_;
  Admission a;  // its claim is held until run_transactional returns
  if (auto answer = impl.admit_or_answer(headers, raw_body, a, true)) return std::move(*answer);
  return impl.run_transactional(a.event, a.fingerprint, handler);
}

db::Database& Receiver::database() { return *impl_->db; }
std::shared_ptr<db::Database> Receiver::shared_database() const { return impl_->db; }
idempotency::Store& Receiver::store() { return impl_->store; }
const Config& Receiver::config() const { return impl_->config; }
bool Receiver::durable_claims() { return impl_->durable_claims(); }

}  // namespace webhooks::receiver
