// webhooks::launcher::ChildProcess with /bin/sh as a real child: the environment it passes, the
// `listening on HOST:PORT` line, signals and raw wait statuses, SIGKILL after the grace, restarts
// that continue the files, run_to_end, and that no child outlives a parent killed outright.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "support/test_env.h"
#include "webhooks/launcher/child_process.h"

namespace {

using webhooks::launcher::ChildProcess;
using webhooks::launcher::Error;
using webhooks::launcher::Options;
using namespace std::chrono_literals;

const char* const kShell = "/bin/sh";

// True while `pid` exists and is not a zombie.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  return line.substr(line.rfind(')') + 2, 1) != "Z";
}

}  // namespace

TEST_CASE("launcher: env is set over the parent's environment, the later of two pairs wins") {
  const std::string dir = webhooks::test::temp_dir("launcher-env");
  REQUIRE(::setenv("WEBHOOKS_LAUNCHER_KEPT", "from the parent", 1) == 0);
  REQUIRE(::setenv("WEBHOOKS_LAUNCHER_SET", "overridden", 1) == 0);
  Options options;
  options.env = {{"WEBHOOKS_LAUNCHER_SET", "first"},
                 {"WEBHOOKS_LAUNCHER_NEW", "a b=c"},
                 {"WEBHOOKS_LAUNCHER_SET", "second"}};
  const auto run = webhooks::launcher::run_to_end(
      kShell,
      {"-c",
       "printf '%s|%s|%s\\n' \"$WEBHOOKS_LAUNCHER_KEPT\" \"$WEBHOOKS_LAUNCHER_SET\" "
       "\"$WEBHOOKS_LAUNCHER_NEW\"; env | grep -c '^WEBHOOKS_LAUNCHER_SET='"},
      dir, options);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "from the parent|second|a b=c\n1\n");
  CHECK(run.err.empty());
}

TEST_CASE("launcher: an env name that is empty or holds '=' is refused before the start") {
  const std::string dir = webhooks::test::temp_dir("launcher-env-name");
  for (const std::string name : {"", "A=B"}) {
    Options options;
    options.env = {{name, "x"}};
    CHECK_THROWS_WITH(ChildProcess(kShell, {"-c", "exit 0"}, dir, options),
                      "environment variable name \"" + name + "\" is empty or holds '='");
  }
}

TEST_CASE("launcher: wait_listening returns PORT of the first line; stdout and stderr in files") {
  const std::string dir = webhooks::test::temp_dir("launcher-listen");
  Options options;
  options.label = "server";
  ChildProcess child(kShell,
                     {"-c", "echo 'listening on 127.0.0.1:4242'; echo oops >&2; exec sleep 60"},
                     dir, options);
  CHECK(child.wait_listening() == 4242);
  CHECK(child.port() == 4242);
  CHECK(child.out_path() == dir + "/server.out");
  CHECK(child.err_path() == dir + "/server.err");
  CHECK(child.out() == "listening on 127.0.0.1:4242\n");
  CHECK_FALSE(child.wait_exit(0ms).has_value());
  CHECK(child.running());
  // kill_and_wait returns the raw wait status.
  const int status = child.kill_and_wait(SIGTERM);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(child.describe_exit() == "killed by signal 15 (Terminated)");
  CHECK(child.err() == "oops\n");
}

TEST_CASE("launcher: the child leads its own process group, stdin is /dev/null") {
  const std::string dir = webhooks::test::temp_dir("launcher-group");
  ChildProcess child(kShell, {"-c", "echo 'listening on [::1]:1'; exec sleep 60"}, dir);
  CHECK(child.wait_listening() == 1);
  CHECK(::getpgid(child.pid()) == child.pid());
  CHECK(::getpgid(child.pid()) != ::getpgrp());
  CHECK(std::filesystem::read_symlink("/proc/" + std::to_string(child.pid()) + "/fd/0") ==
        "/dev/null");
}

TEST_CASE("launcher: wait_listening fails with the line, the exit and the end of stderr") {
  const std::string dir = webhooks::test::temp_dir("launcher-not-listening");
  Options options;
  options.label = "talker";
  ChildProcess talker(kShell, {"-c", "echo hello; exec sleep 60"}, dir, options);
  CHECK_THROWS_WITH(talker.wait_listening(),
                    "talker printed \"hello\" instead of \"listening on HOST:PORT\"");
  options.label = "quitter";
  ChildProcess quitter(kShell, {"-c", "echo 'cannot bind' >&2; exit 3"}, dir, options);
  CHECK_THROWS_WITH(quitter.wait_listening(),
                    "quitter exited (exit code 3) before listening. The "
                    "end of " +
                        dir + "/quitter.err:\n  cannot bind\n");
  CHECK(quitter.exit_status() == 3 << 8);
  options.label = "silent";
  ChildProcess silent(kShell, {"-c", "exec sleep 60"}, dir, options);
  CHECK_THROWS_WITH(silent.wait_listening(20ms),
                    "silent did not print \"listening on HOST:PORT\" in time. The end of " + dir +
                        "/silent.err:\n  (empty)\n");
  CHECK(silent.running());  // still running: stop() or the destructor ends it
}

TEST_CASE("launcher: a missing executable is refused with its path and the reason") {
  const std::string dir = webhooks::test::temp_dir("launcher-missing");
  CHECK_THROWS_WITH(ChildProcess("no-such-executable", {}, dir),
                    "cannot start " +
                        (webhooks::launcher::bin_dir() / "no-such-executable").string() +
                        ": No such file or directory");
}

TEST_CASE("launcher: stop sends SIGTERM, then SIGKILL once the grace has passed") {
  const std::string dir = webhooks::test::temp_dir("launcher-stop");
  // SIGTERM ignored by the shell stays ignored in sleep after exec.
  ChildProcess stubborn(
      kShell, {"-c", "trap '' TERM; echo 'listening on 127.0.0.1:7'; exec sleep 60"}, dir);
  REQUIRE(stubborn.wait_listening() == 7);
  const int status = stubborn.stop(50ms);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK(stubborn.stop() == status);  // once ended, stop() only reports

  // The shell waits for its sleep in `wait`, which SIGTERM interrupts: the trap ends both.
  ChildProcess polite(kShell,
                      {"-c",
                       "trap 'kill $!; exit 0' TERM; echo 'listening on 127.0.0.1:8'; "
                       "sleep 60 & wait"},
                      dir);
  REQUIRE(polite.wait_listening() == 8);
  CHECK(polite.stop() == 0);  // exit code 0
}

TEST_CASE(
    "launcher: restart with other args continues the files, wait_listening reads the new line") {
  const std::string dir = webhooks::test::temp_dir("launcher-restart");
  Options options;
  options.label = "server";
  options.append = true;
  ChildProcess child(kShell, {"-c", "echo 'listening on 127.0.0.1:1'; echo first >&2"}, dir,
                     options);
  CHECK(child.wait_listening() == 1);
  REQUIRE(child.wait_exit(10s) == 0);
  CHECK_THROWS_WITH(
      [&] {
        ChildProcess running(kShell, {"-c", "exec sleep 60"}, dir);
        running.restart();
      }(),
      Catch::Matchers::EndsWith(" is still running"));
  child.set_args({"-c", "echo 'listening on 127.0.0.1:2'; echo second >&2"});
  child.restart();
  CHECK(child.wait_listening() == 2);
  REQUIRE(child.wait_exit(10s) == 0);
  CHECK(child.out() == "listening on 127.0.0.1:1\nlistening on 127.0.0.1:2\n");
  CHECK(child.err() == "first\nsecond\n");
  CHECK(child.err_tail(1) == "  second\n");
}

TEST_CASE(
    "launcher: run_to_end gives the exit code (128 + signal), and kills a run past its time") {
  const std::string dir = webhooks::test::temp_dir("launcher-run");
  const auto exited =
      webhooks::launcher::run_to_end(kShell, {"-c", "echo out; echo err >&2; exit 4"}, dir);
  CHECK(exited.exit_code == 4);
  CHECK(exited.out == "out\n");
  CHECK(exited.err == "err\n");
  CHECK(webhooks::launcher::run_to_end(kShell, {"-c", "kill -9 $$"}, dir).exit_code == 137);
  Options options;
  options.label = "slow";
  CHECK_THROWS_WITH(
      webhooks::launcher::run_to_end(kShell, {"-c", "exec sleep 60"}, dir, options, 50ms),
      "slow did not finish within 50 ms");
}

TEST_CASE("launcher: a parent killed with SIGKILL takes its child along (PR_SET_PDEATHSIG)") {
  const std::string dir = webhooks::test::temp_dir("launcher-orphan");
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {
    // The forked test process starts a child, reports its pid, then dies without a destructor.
    ::close(pipe_fds[0]);
    try {
      ChildProcess child(kShell, {"-c", "exec sleep 60"}, dir);
      const pid_t pid = child.pid();
      [[maybe_unused]] auto written = ::write(pipe_fds[1], &pid, sizeof pid);
      ::kill(::getpid(), SIGKILL);
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(pipe_fds[1]);
  pid_t child = -1;
  REQUIRE(::read(pipe_fds[0], &child, sizeof child) == sizeof child);
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(parent, &status, 0) == parent);
  REQUIRE(WIFSIGNALED(status));
  // Bounded poll: the orphan gets SIGTERM at once.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (alive(child) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  CHECK_FALSE(alive(child));
}
