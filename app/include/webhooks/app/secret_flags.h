// Secret flags (signing secrets, API keys, bearer tokens) that need not show in `ps`: every one is
// given on the command line (--NAME VALUE), in a file (--NAME-file PATH, "-" for standard input),
// in an environment variable (ENV) or in a file an environment variable names (ENV_FILE, the
// convention of Docker's and Kubernetes' secrets), checked by the same rule whichever way it
// comes. docs/security.md, "Secrets".
//
// Precedence: the command line (or a --config file) over --NAME-file over ENV_FILE over ENV;
// --NAME and --NAME-file together are a usage error, wherever given, and so are ENV and ENV_FILE
// both set. Every error is a CLI11 ParseError (exit code kUsageExitCode through
// parse_command_line) and never repeats a value:
//   "--secret and --secret-file were both given; give one of them"
//   "--secret-file: cannot read /etc/shop/secret: No such file or directory"
//   "--secret-file: /etc/shop/secret holds no value (blank lines and # comments are ignored)"
//   "--secret-file: /etc/shop/secret line 2: secret is not valid base64 (...)"
//   "WEBHOOKS_SECRET: value 2: secret is not valid base64 (...)"
//   "--admin-token-file: /etc/token holds 2 values; --admin-token takes one"
//   "WEBHOOKS_ADMIN_TOKEN and WEBHOOKS_ADMIN_TOKEN_FILE are both set; set one of them"
//   "--secret is required: give --secret, --secret-file or WEBHOOKS_SECRET (or
//    WEBHOOKS_SECRET_FILE)"
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

namespace webhooks::app {

// The largest file a --NAME-file flag reads: 64 KiB (a secret is tens of bytes; this is room for
// hundreds of rotated secrets or API keys, and keeps a wrong path such as a log file or
// /dev/zero from being read whole).
inline constexpr std::size_t kMaxSecretFileBytes = 64 * 1024;

// One secret flag.
struct SecretFlag {
  std::string name;         // "--secret"; the file flag is name + "-file"
  std::string env;          // "WEBHOOKS_SECRET": read when neither flag is given; env + "_FILE"
                            // names a file read as --NAME-file reads one
  std::string description;  // --help text of --NAME; the file flag and the variable are added
  CLI::Validator check;     // every value, whichever way it comes (signing_secret(), ...)
  bool required = false;    // one of the ways must give a value (else "--NAME is required: give
                            // --NAME, --NAME-file or ENV (or ENV_FILE)")
};

// Adds flag.name (repeatable: one value per occurrence) and flag.name + "-file" to `app`, which
// fill `values`:
//  - --NAME VALUE, repeated for several;
//  - --NAME-file PATH ("-": standard input), or the file ENV_FILE names: one value a line, after a
//    leading UTF-8 byte order mark; each line trimmed of spaces, tabs and a CR at its ends;
//    blank lines and lines starting with '#' ignored; at least one value; at most
//    kMaxSecretFileBytes. A regular file that its group or others may read or write is read, with
//    a warning on stderr ("warning: --secret-file PATH is open to group or others (mode 0644);
//    chmod 600 it"): orchestrators mount secrets 0644 in a directory only the service can enter,
//    so refusing would break them, as ssh and libpq refuse only their own key files;
//  - the variable `flag.env`: values separated by commas or newlines, each trimmed, empty ones
//    ignored; an empty variable counts as unset.
// `app` may be a subcommand: nothing is read unless it is the one given, nor after --help.
// Returns the --NAME option.
CLI::Option* add_secret_option(CLI::App& app, const SecretFlag& flag,
                               std::vector<std::string>& values);

// As above for a flag that takes one value: a file or a variable with more than one is refused
// ("holds 2 values; --NAME takes one"); the variable is not split, only trimmed.
CLI::Option* add_secret_option(CLI::App& app, const SecretFlag& flag, std::string& value);

}  // namespace webhooks::app
