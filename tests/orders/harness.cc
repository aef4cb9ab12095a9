#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/test_env.h"

extern char** environ;

namespace webhooks::test {
namespace {

using namespace std::chrono;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

Answer to_answer(const httplib::Result& result) {
  Answer answer;
  answer.status = result->status;
  answer.body = result->body;
  answer.headers = result->headers;
  return answer;
}

std::unique_ptr<httplib::Client> client(int port) {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port);
  c->set_connection_timeout(seconds(5));
  c->set_read_timeout(seconds(90));
  c->set_write_timeout(seconds(5));
  return c;
}

httplib::Headers auth_headers(const std::string& token, const std::optional<std::string>& key) {
  httplib::Headers headers = {{"Authorization", "Bearer " + token}};
  if (key) headers.emplace("Idempotency-Key", *key);
  return headers;
}

}  // namespace

Process::Process(const std::string& executable, const std::vector<std::string>& args,
                 const std::string& dir) {
  static int counter = 0;
  label_ = executable + "." + std::to_string(++counter);
  out_path_ = dir + "/" + label_ + ".out";
  err_path_ = dir + "/" + label_ + ".err";
  const std::string path = bin_dir() + "/" + executable;
  std::vector<std::string> argv_storage = {path};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  const int rc = posix_spawn(&pid_, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) FAIL("cannot start " << path << ": " << std::strerror(rc));
}

Process::~Process() {
  if (status_ || pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  if (!wait_exit(seconds(10))) {
    ::kill(pid_, SIGKILL);
    wait_exit(seconds(10));
  }
}

int Process::wait_listening() {
  const auto deadline = steady_clock::now() + seconds(15);
  while (steady_clock::now() < deadline) {
    const std::string text = out();
    const std::size_t newline = text.find('\n');
    if (newline != std::string::npos) {
      const std::string line = text.substr(0, newline);
      const std::size_t colon = line.rfind(':');
      if (line.rfind("listening on ", 0) != 0 || colon == std::string::npos) {
        FAIL(label_ << ": first line is not `listening on HOST:PORT`: " << line);
      }
      return std::stoi(line.substr(colon + 1));
    }
    if (auto status = wait_exit(milliseconds(0))) {
      FAIL(label_ << " ended (" << describe_status(*status) << ") before listening: " << err());
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  FAIL(label_ << " did not print `listening on` within 15 s: " << err());
  return 0;
}

int Process::kill_and_wait(int signal) {
  if (!status_) ::kill(pid_, signal);
  const auto status = wait_exit(seconds(15));
  if (!status) FAIL(label_ << " did not exit after signal " << signal);
  return *status;
}

std::optional<int> Process::wait_exit(milliseconds timeout) {
  const auto deadline = steady_clock::now() + timeout;
  while (!status_) {
    int status = 0;
    const pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      status_ = status;
      break;
    }
    if (steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return status_;
}

std::string Process::out() const { return slurp(out_path_); }
std::string Process::err() const { return slurp(err_path_); }

Finished run_to_end(const std::string& executable, const std::vector<std::string>& args,
                    const std::string& dir) {
  Process process(executable, args, dir);
  const auto status = process.wait_exit(seconds(60));
  if (!status) FAIL(executable << " did not finish within 60 s");
  Finished done;
  done.exit_code = WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
  done.out = process.out();
  done.err = process.err();
  return done;
}

std::string Answer::header(const std::string& name) const {
  const auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

nlohmann::json Answer::json() const {
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_discarded()) FAIL("not JSON: " << body);
  return parsed;
}

std::string Answer::error_code() const {
  const nlohmann::json parsed = json();
  if (!parsed.contains("error")) FAIL("no error in: " << body);
  return parsed["error"]["code"].get<std::string>();
}

Stack::Stack()
    : dir(temp_dir("orders")),
      orders_db(database_target("orders")),
      partner_db(dir + "/partner.db") {}

Stack::~Stack() = default;

void Stack::start_partner(const std::vector<std::string>& extra, int port) {
  std::vector<std::string> args = {"--listen", "127.0.0.1:" + std::to_string(port), "--db",
                                   partner_db};
  args.insert(args.end(), extra.begin(), extra.end());
  partner = std::make_unique<Process>("payout-partner", args, dir);
  partner_port = partner->wait_listening();
}

void Stack::stop_partner() {
  partner->kill_and_wait(SIGTERM);
  partner.reset();
}

void Stack::start_api(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--listen",  "127.0.0.1:0", "--db",      orders_db,
                                   "--api-key", "key-m1:m1",   "--api-key", "key-m2:m2"};
  if (partner_port != 0) {
    args.push_back("--partner-url");
    args.push_back("http://127.0.0.1:" + std::to_string(partner_port));
  }
  args.insert(args.end(), extra.begin(), extra.end());
  api.reset();
  api = std::make_unique<Process>("orders-api", args, dir);
  api_port = api->wait_listening();
}

std::optional<Answer> Stack::try_post(const std::string& path, std::optional<std::string> key,
                                      const std::string& body, const std::string& token) {
  const auto result =
      client(api_port)->Post(path.c_str(), auth_headers(token, key), body, "application/json");
  if (!result) return std::nullopt;
  return to_answer(result);
}

Answer Stack::post(const std::string& path, std::optional<std::string> key, const std::string& body,
                   const std::string& token) {
  const auto result =
      client(api_port)->Post(path.c_str(), auth_headers(token, key), body, "application/json");
  if (!result) FAIL("POST " << path << ": " << httplib::to_string(result.error()));
  return to_answer(result);
}

Answer Stack::get(const std::string& path, const std::string& token) {
  const auto result = client(api_port)->Get(path.c_str(), auth_headers(token, std::nullopt));
  if (!result) FAIL("GET " << path << ": " << httplib::to_string(result.error()));
  return to_answer(result);
}

Answer Stack::put(const std::string& path, const std::string& body, const std::string& token) {
  const auto result = client(api_port)->Put(path.c_str(), auth_headers(token, std::nullopt), body,
                                            "application/json");
  if (!result) FAIL("PUT " << path << ": " << httplib::to_string(result.error()));
  return to_answer(result);
}

nlohmann::json Stack::transfers() {
  const auto result = client(partner_port)->Get("/transfers");
  if (!result) FAIL("GET /transfers: " << httplib::to_string(result.error()));
  REQUIRE(result->status == 200);
  return nlohmann::json::parse(result->body)["transfers"];
}

Finished Stack::reconcile() {
  return run_to_end("orders-api",
                    {"reconcile", "--db", orders_db, "--partner-url",
                     "http://127.0.0.1:" + std::to_string(partner_port)},
                    dir);
}

db::Database& Stack::db() {
  if (!db_) db_ = db::Database::open(orders_db);
  return *db_;
}

std::int64_t Stack::count(const std::string& sql) { return db().exec(sql).integer(0, 0); }

}  // namespace webhooks::test
