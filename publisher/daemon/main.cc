// webhooks-publisherd: parse flags into publisher::Options, build the Publisher, serve it until
// SIGTERM or SIGINT, then stop the server, stop the Publisher (in-flight attempts finish and are
// recorded), and exit 0; exit 2 on a usage error, 1 when it cannot run (publisher.h).
#include <iostream>

#include "delivery/dispatcher.h"
#include "options.h"
#include "webhooks/app/server.h"
#include "webhooks/log.h"
#include "webhooks/publisher/publisher.h"

namespace {

using namespace webhooks;

int run(const publisher::Options& options) {
  publisher::Publisher publisher(options);
  http::Server server;
  publisher.mount(server);
  const app::ListenAddress address = app::parse_listen(options.listen);
  const int port = app::bind_and_announce(server, address, options.server);
  log_event(spdlog::level::info, {{"event", "started"},
                                  {"listen", address.host + ":" + std::to_string(port)},
                                  {"db", publisher.database().describe()},
                                  {"instance_id", publisher.dispatcher().instance_id()},
                                  {"retry_schedule", options.retry_policy.schedule_text()},
                                  {"workers", options.workers}});
  publisher.start();
  {
    const app::StopOnSignal stop_on_signal(server, port);
    server.listen_after_bind();
  }
  log_event(spdlog::level::info, {{"event", "stopping"}});
  publisher.stop();
  log_event(spdlog::level::info, {{"event", "stopped"}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  app::tune_malloc();
  app::block_stop_signals();
  const publisherd::Parsed parsed = publisherd::parse_options(argc, argv);
  if (parsed.exit_code >= 0) return parsed.exit_code;
  configure_json_logging(parsed.log_level);
  try {
    return run(parsed.options);
  } catch (const std::exception& e) {
    log_event(spdlog::level::err, {{"event", "fatal"}, {"error", e.what()}});
    std::cerr << "webhooks-publisherd: " << e.what() << "\n";
    return 1;
  }
}
