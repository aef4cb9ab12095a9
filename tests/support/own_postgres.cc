#include "support/own_postgres.h"

#include <libpq-fe.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_env.h"

namespace webhooks::test {
namespace {

// `bash scripts/test-postgres ACTION STATE_DIR` with WEBHOOKS_TEST_POSTGRES_URL unset (so that it
// starts a server rather than recording the suite's); its exit status.
int test_postgres(const std::string& action, const std::string& state_dir) {
  const std::string command = std::string("env -u WEBHOOKS_TEST_POSTGRES_URL bash ") +
                              WEBHOOKS_TEST_SCRIPTS_DIR + "/test-postgres " + action + " '" +
                              state_dir + "'";
  return std::system(command.c_str());
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The processes whose parent is `parent` (/proc/PID/stat's fourth field).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;  // gone meanwhile
    const std::size_t comm_end = stat.rfind(')');
    if (comm_end == std::string::npos) continue;
    std::istringstream fields(stat.substr(comm_end + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid == parent) children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

}  // namespace

OwnPostgres::OwnPostgres() : state_dir_(temp_dir("own-postgres")) {
  REQUIRE(test_postgres("start", state_dir_) == 0);
  url_ = first_line(state_dir_ + "/url");
  REQUIRE(url_.starts_with("postgresql://"));
}

OwnPostgres::~OwnPostgres() {
  if (frozen_) frozen_->thaw();
  test_postgres("stop", state_dir_);
}

std::string OwnPostgres::create_database(const std::string& name) {
  PGconn* conn = PQconnectdb(url_.c_str());
  const bool connected = PQstatus(conn) == CONNECTION_OK;
  PGresult* res = connected ? PQexec(conn, ("CREATE DATABASE " + name).c_str()) : nullptr;
  const bool created = PQresultStatus(res) == PGRES_COMMAND_OK;
  const std::string message = PQerrorMessage(conn);
  PQclear(res);
  PQfinish(conn);
  if (!created) FAIL("CREATE DATABASE " << name << " on " << url_ << ": " << message);
  return url_.substr(0, url_.rfind('/') + 1) + name;
}

pid_t OwnPostgres::postmaster() const {
  // postmaster.pid's first line is the postmaster's process id.
  const std::string data = first_line(state_dir_ + "/datadir");
  return static_cast<pid_t>(std::stol(first_line(data + "/db/postmaster.pid")));
}

OwnPostgres::Frozen::Frozen(OwnPostgres& server) : server_(server) {
  REQUIRE(server.frozen_ == nullptr);
  const pid_t postmaster = server.postmaster();
  // The postmaster first: stopped, it starts no process the list below would miss.
  REQUIRE(::kill(postmaster, SIGSTOP) == 0);
  pids_.push_back(postmaster);
  server.frozen_ = this;
  for (const pid_t child : children_of(postmaster)) {
    if (::kill(child, SIGSTOP) == 0) pids_.push_back(child);
  }
}

void OwnPostgres::Frozen::thaw() {
  if (server_.frozen_ != this) return;
  for (const pid_t pid : pids_) ::kill(pid, SIGCONT);
  server_.frozen_ = nullptr;
}

}  // namespace webhooks::test
