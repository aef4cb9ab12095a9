// A PostgreSQL server of the test's own (scripts/test-postgres in a directory of the test's), for
// what must not touch the suite's shared server: freezing it (SIGSTOP), as a host that stops
// answering does.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace webhooks::test {

class OwnPostgres {
 public:
  // Starts the server (initdb, pg_ctl start on 127.0.0.1 and a free port). Fails the test when
  // it cannot.
  OwnPostgres();
  // Thaws it if frozen, then stops it and deletes its data.
  ~OwnPostgres();
  OwnPostgres(const OwnPostgres&) = delete;
  OwnPostgres& operator=(const OwnPostgres&) = delete;

  // postgresql://postgres@127.0.0.1:PORT/NAME of a new, empty database `name` on it.
  std::string create_database(const std::string& name);

  // While one is alive the server is frozen: its postmaster, then every process it started
  // (backends, background workers), get SIGSTOP; nothing is closed, nothing answers. The
  // destructor (or thaw(), once) sends SIGCONT to the same processes.
  class Frozen {
   public:
    explicit Frozen(OwnPostgres& server);
    ~Frozen() { thaw(); }
    Frozen(const Frozen&) = delete;
    Frozen& operator=(const Frozen&) = delete;
    // SIGCONT to every process stopped; nothing the second time.
    void thaw();
    // How many processes were stopped (the postmaster included).
    std::size_t processes() const { return pids_.size(); }

   private:
    OwnPostgres& server_;
    std::vector<pid_t> pids_;
  };

 private:
  pid_t postmaster() const;
  std::string state_dir_, url_;
  Frozen* frozen_ = nullptr;
};

// Milliseconds since `start`: how long a call took while the server was frozen.
inline long long ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

// While the server is frozen: runs each of `stuck` (requests that need the database) on a thread
// of its own and, until every one has returned, calls `probe(still_waiting)` over and over on this
// thread; `still_waiting()` says whether one of them has not returned yet. Joins them before it
// returns, also when `probe` throws. The calls must not assert (they run off the test's thread).
template <typename Probe>
void probe_while_stuck(const std::vector<std::function<void()>>& stuck, Probe probe) {
  std::atomic<std::size_t> returned{0};
  std::vector<std::thread> threads;
  for (const std::function<void()>& call : stuck) {
    threads.emplace_back([&call, &returned] {
      call();
      ++returned;
    });
  }
  try {
    while (returned.load() < stuck.size()) {
      probe([&] { return returned.load() < stuck.size(); });
    }
  } catch (...) {  // a failed REQUIRE in `probe`: the threads are joined all the same
    for (std::thread& t : threads) t.join();
    throw;
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace webhooks::test
