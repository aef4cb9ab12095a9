// Config::claims resolved at the first delivery, and the process's flock on a SQLite file that
// tells which Receivers share it (receiver_impl.h).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "receiver_impl.h"
#include "webhooks/error.h"

namespace webhooks::receiver {
namespace {

[[noreturn]] void refuse_shared(const std::string& path) {
  throw Error(ErrorCode::invalid_argument,
              "another process's receiver uses " + path +
                  " alone (in-process claims); give every receiver sharing a SQLite file "
                  "Config::claims = durable");
}

}  // namespace

FileLock::~FileLock() {
  if (fd >= 0) ::close(fd);
}

std::shared_ptr<FileLock> lock_file(const std::string& path, bool exclusive) {
  static std::mutex mutex;
  static std::map<std::pair<dev_t, ino_t>, std::weak_ptr<FileLock>> locks;
  auto lock = std::make_shared<FileLock>();
  lock->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (lock->fd < 0 || ::fstat(lock->fd, &st) != 0) {
    throw Error(ErrorCode::storage, "cannot open " + path + " to lock it");
  }
  std::lock_guard guard(mutex);
  auto& slot = locks[{st.st_dev, st.st_ino}];
  if (auto existing = slot.lock()) return existing;  // this process locked it already
  if (exclusive && ::flock(lock->fd, LOCK_EX | LOCK_NB) == 0) {
    lock->exclusive = true;
  } else if (::flock(lock->fd, LOCK_SH | LOCK_NB) != 0) {
    refuse_shared(path);
  }
  slot = lock;
  return lock;
}

bool Receiver::Impl::resolve_claims_once() {
  std::lock_guard lock(claims_mutex);
  if (!claims_resolved.load(std::memory_order_relaxed)) {
    durable = resolve_claims();
    claims_resolved.store(true, std::memory_order_release);
  }
  return durable;
}

bool Receiver::Impl::resolve_claims() {
  using Claims = Config::Claims;
  if (db->engine() == db::Engine::postgres) return config.claims != Claims::in_process;
  if (db->file_path().empty() || config.claims == Claims::in_process) {  // in memory: one process
    return config.claims == Claims::durable;
  }
  lock_database_file(config.claims == Claims::automatic);
  return config.claims == Claims::durable || !file->exclusive;
}

void Receiver::Impl::lock_database_file(bool exclusive) {
  if (!file) file = lock_file(db->file_path(), exclusive);
  if (file->exclusive) claims.store(&file->claims);
}

void Receiver::Impl::share_for_transactions_once() {
  std::lock_guard lock(claims_mutex);
  if (transactions_locked.load(std::memory_order_relaxed)) return;
  if (db->engine() == db::Engine::sqlite && !db->file_path().empty() &&
      config.claims != Config::Claims::in_process) {
    lock_database_file(false);
  }
  transactions_locked.store(true, std::memory_order_release);
}

}  // namespace webhooks::receiver
