// build/bin/webhooks — see `webhooks --help` and README.md, "The webhooks CLI".
#include <iostream>

#include "cli.h"
#include "webhooks/error.h"
#include "webhooks/log.h"
#include "webhooks/version.h"

int main(int argc, char** argv) {
  using namespace webhooks::cli;
  webhooks::configure_json_logging("warn");  // library logs on stderr; stdout is the output
  CLI::App app{"webhooks: sign, verify, send, listen for and replay Standard Webhooks deliveries"};
  app.set_version_flag("--version", std::string(webhooks::kVersion));
  app.require_subcommand(1);
  Action action;
  add_sign(app, action);
  add_verify(app, action);
  add_send(app, action);
  add_listen(app, action);
  add_admin(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  }
  try {
    return action ? action() : kUsage;
  } catch (const UsageError& e) {
    std::cerr << "webhooks: " << e.what() << "\n";
    return kUsage;
  } catch (const webhooks::Error& e) {
    std::cerr << "webhooks: " << e.what() << "\n";
    return e.code() == webhooks::ErrorCode::invalid_secret || e.code() == webhooks::ErrorCode::invalid_key
               ? kUsage
               : kFailed;
  } catch (const std::exception& e) {
    std::cerr << "webhooks: " << e.what() << "\n";
    return kFailed;
  }
}
