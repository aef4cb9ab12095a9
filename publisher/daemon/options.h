// webhooks-publisherd's command line: every flag, its environment variable, and the field of
// webhooks::publisher::Options it sets (the defaults are Options' own, options.h).
#pragma once

#include <string>

#include "webhooks/publisher/options.h"

namespace webhooks::publisherd {

// Parses argv (flags, WEBHOOKS_* environment variables, an optional --config file; the admin token
// also from --admin-token-file, app/secret_flags.h) into publisher::Options and checks every
// value, alone and together (--retry-schedule with --max-age, --delivery-lease against --timeout
// and the batch rounds), so a bad one exits 2 here. `exit_code >= 0` when the process should exit
// (help, bad flag).
struct Parsed {
  publisher::Options options;
  std::string log_level = "info";  // --log-level: the process's, not the Publisher's
  int exit_code = -1;
};
Parsed parse_options(int argc, char** argv);

}  // namespace webhooks::publisherd
