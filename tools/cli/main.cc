// build/bin/webhooks — see `webhooks --help` and README.md, "The webhooks CLI".
#include <csignal>
#include <iostream>

#include "cli.h"
#include "webhooks/app/flags.h"
#include "webhooks/error.h"
#include "webhooks/log.h"
#include "webhooks/version.h"

namespace {

// When an argument where a command is expected (the first, or the one after a command that has
// commands of its own, such as `endpoint`) is neither an option nor one of the commands there,
// says so on stderr, with the list of commands, and returns true.
bool unknown_command(const CLI::App& app, int argc, char** argv) {
  const CLI::App* parent = &app;
  std::string path = "webhooks";
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    const std::string name = argv[i];
    const auto all = parent->get_subcommands([](const CLI::App*) { return true; });
    if (all.empty()) return false;
    const CLI::App* found = nullptr;
    std::string names;
    for (const CLI::App* command : all) {
      if (command->check_name(name)) found = command;
      names += (names.empty() ? "" : ", ") + command->get_name();
    }
    if (found == nullptr) {
      std::cerr << path << ": unknown command '" << name << "'; the commands are: " << names
                << "\nRun with --help for more information.\n";
      return true;
    }
    parent = found;
    path += " " + name;
  }
  return false;
}

// The --*-file flags of the command line given "-" (standard input): before parsing, since the
// secret flags read their files while parsing. Standard input can be read once: with two of them,
// says so on stderr and returns true.
bool two_readers_of_stdin(int argc, char** argv) {
  std::vector<std::string> readers;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.starts_with("--")) continue;
    if (arg.ends_with("-file=-")) {
      readers.push_back(arg.substr(0, arg.size() - 2));
    } else if (arg.ends_with("-file") && i + 1 < argc && std::string(argv[i + 1]) == "-") {
      readers.push_back(arg);
    }
  }
  if (readers.size() < 2) return false;
  std::cerr << "webhooks: " << readers[0] << " - and " << readers[1]
            << " - both read standard input; give one of them a file\n";
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // cpp-httplib's client writes without MSG_NOSIGNAL: a server that closes while a body is still
  // being sent (a 413 for `send --data @FILE` of 50 MB) killed the CLI silently with SIGPIPE (exit
  // 141). Ignored, the write fails with EPIPE and the command says so (exit 1).
  std::signal(SIGPIPE, SIG_IGN);
  using namespace webhooks::cli;
  webhooks::configure_json_logging("warn");  // library logs on stderr; stdout is the output
  CLI::App app{
      "webhooks: sign, verify, send, listen for and replay Standard Webhooks deliveries; publish "
      "events and manage endpoints through the publisher"};
  app.set_version_flag("--version", std::string(webhooks::kVersion));
  app.require_subcommand(1);
  Action action;
  add_sign(app, action);
  add_verify(app, action);
  add_send(app, action);
  add_publish(app, action);
  add_listen(app, action);
  add_admin(app, action);
  add_endpoint(app, action);
  if (unknown_command(app, argc, argv) || two_readers_of_stdin(argc, argv)) return kUsage;
  if (const auto exit_code = webhooks::app::parse_command_line(app, argc, argv)) {
    return *exit_code;
  }
  try {
    return action ? action() : kUsage;
  } catch (const UsageError& e) {
    std::cerr << "webhooks: " << e.what() << "\n";
    return kUsage;
  } catch (const webhooks::Error& e) {
    std::cerr << "webhooks: " << e.what() << "\n";
    return e.code() == webhooks::ErrorCode::invalid_secret ||
                   e.code() == webhooks::ErrorCode::invalid_key
               ? kUsage
               : kFailed;
  } catch (const std::exception& e) {
    std::cerr << "webhooks: " << e.what() << "\n";
    return kFailed;
  }
}
