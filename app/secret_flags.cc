#include "webhooks/app/secret_flags.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <utility>

namespace webhooks::app {
namespace {

// The --NAME-file option's value when it was not given: a NUL byte, which no argument and no
// config value can hold. It never shows: the option's --help text is set with option_text.
const std::string kNotGiven(1, '\0');

struct Source {
  std::string name;  // "--secret-file: /etc/shop/secret" or "WEBHOOKS_SECRET"
  std::string item;  // " line " or ": value ": what comes before a value's position in a message
};

struct Value {
  std::size_t position = 0;  // line number in a file, index in a variable (from 1)
  std::string text;
};

struct State {
  SecretFlag flag;
  std::string file_flag;
  bool repeatable = false;
  CLI::App* owner = nullptr;
  CLI::Option* option = nullptr;
  std::function<void(std::vector<std::string>)> assign;
};

std::string_view trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// Splits `text` at each of `separators`, trims every piece and drops the empty ones (and, when
// `comments`, those starting with '#'). Positions count the pieces from 1, kept or not.
std::vector<Value> split(std::string_view text, std::string_view separators, bool comments) {
  std::vector<Value> values;
  std::size_t position = 0;
  while (true) {
    ++position;
    const std::size_t end = text.find_first_of(separators);
    const std::string_view piece = trim(text.substr(0, end));
    if (!piece.empty() && !(comments && piece.front() == '#')) {
      values.push_back({position, std::string(piece)});
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return values;
}

// The bytes of `path` ("-": standard input), at most kMaxSecretFileBytes, without a leading UTF-8
// byte order mark (editors on Windows write one); warns on stderr when a regular file is open to
// group or others. Throws CLI::ValidationError naming `file_flag`.
std::string read_secret_file(const std::string& file_flag, const std::string& path) {
  const auto fail = [&](const std::string& why) { return CLI::ValidationError(file_flag, why); };
  if (path.empty()) throw fail("needs a file path");
  const bool stdin_path = path == "-";
  const int fd = stdin_path ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail("cannot read " + path + ": " + std::strerror(errno));
  const struct Closer {
    int fd;
    bool owned;
    ~Closer() {
      if (owned) ::close(fd);
    }
  } closer{fd, !stdin_path};
  struct stat st {};
  if (!stdin_path && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    std::cerr << "warning: " << file_flag << " " << path << " is open to group or others (mode "
              << mode << "); chmod 600 it" << std::endl;
  }
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail("cannot read " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kMaxSecretFileBytes) {
      throw fail(path + " is larger than " + std::to_string(kMaxSecretFileBytes) + " bytes");
    }
  }
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (std::string_view(text).starts_with(kByteOrderMark)) text.erase(0, kByteOrderMark.size());
  return text;
}

// "--secret, --secret-file or WEBHOOKS_SECRET (or WEBHOOKS_SECRET_FILE)": every way to give it.
std::string every_way(const State& state) {
  return state.flag.name + ", " + state.file_flag + " or " + state.flag.env + " (or " +
         state.flag.env + "_FILE)";
}

// True when --help was given to `app` or to one of its parents.
bool help_requested(const CLI::App* app) {
  for (; app != nullptr; app = app->get_parent()) {
    const CLI::Option* help = app->get_help_ptr();
    if (help != nullptr && help->count() > 0) return true;
  }
  return false;
}

// Runs once after parsing, with the --NAME-file path or kNotGiven: takes the values from the file
// or the variable when --NAME was not given, checks them and hands them to --NAME.
void resolve(const State& state, const std::string& path) {
  if (!state.owner->parsed() || help_requested(state.owner)) return;
  const std::string& name = state.flag.name;
  const bool file_given = path != kNotGiven;
  if (state.option->count() > 0) {
    if (file_given) {
      throw CLI::ValidationError(name + " and " + state.file_flag +
                                 " were both given; give one of them");
    }
    return;
  }
  std::vector<Value> values;
  Source source;
  // NAME_FILE (the convention of Docker's and Kubernetes' secrets): a path, read as --NAME-file.
  const std::string env_file = state.flag.env + "_FILE";
  const char* env_path = std::getenv(env_file.c_str());
  const bool env_file_given = !file_given && env_path != nullptr && *env_path != '\0';
  const char* env = std::getenv(state.flag.env.c_str());
  if (env_file_given && env != nullptr && !split(env, "", false).empty()) {
    throw CLI::ValidationError(state.flag.env + " and " + env_file +
                               " are both set; set one of them");
  }
  if (file_given || env_file_given) {
    const std::string& from = file_given ? state.file_flag : env_file;
    const std::string file = file_given ? path : std::string(env_path);
    values = split(read_secret_file(from, file), "\n", true);
    source = {from + ": " + file, " line "};
    if (values.empty()) {
      throw CLI::ValidationError(from,
                                 file + " holds no value (blank lines and # comments are ignored)");
    }
  } else {
    if (env != nullptr) {
      values = state.repeatable ? split(env, ",\n", false) : split(env, "", false);
      source = {state.flag.env, ": value "};
    }
    if (values.empty()) {  // unset, empty or blank
      if (state.flag.required) {
        throw CLI::RequiredError(state.flag.name + " is required: give " + every_way(state),
                                 CLI::ExitCodes::RequiredError);
      }
      return;
    }
  }
  const bool numbered = file_given || env_file_given || state.repeatable;
  if (!state.repeatable && values.size() > 1) {
    throw CLI::ValidationError(source.name + " holds " + std::to_string(values.size()) +
                               " values; " + name + " takes one");
  }
  std::vector<std::string> texts;
  for (Value& value : values) {
    const std::string error = state.flag.check(value.text);
    if (!error.empty()) {
      throw CLI::ValidationError(
          source.name + (numbered ? source.item + std::to_string(value.position) : ""), error);
    }
    texts.push_back(value.text);
  }
  for (const std::string& text : texts) state.option->add_result(text);
  state.option->run_callback();  // counts as given: CLI11's required check passes
  state.assign(std::move(texts));
}

CLI::Option* add(CLI::App& app, const SecretFlag& flag, CLI::Option* option, bool repeatable,
                 std::function<void(std::vector<std::string>)> assign) {
  auto state = std::make_shared<State>();
  state->flag = flag;
  state->file_flag = flag.name + "-file";
  state->repeatable = repeatable;
  state->owner = &app;
  state->option = option;
  state->assign = std::move(assign);
  option->check(flag.check);  // required: checked by resolve, which names every way to give it
  // As CLI11 shows a flag with an environment variable, which this one reads itself.
  option->option_text(option->get_type_name() + (repeatable ? " ..." : "") + " (Env:" + flag.env +
                      (repeatable ? ", comma-separated" : "") + ")" +
                      (flag.required ? " REQUIRED" : ""));
  option->description(flag.description + "; or in the file given by " + state->file_flag +
                      " ('-': standard input), or in " + flag.env + ", or in the file " + flag.env +
                      "_FILE names");
  app.add_option_function<std::string>(
         state->file_flag, [state](const std::string& path) { resolve(*state, path); },
         "read " + flag.name +
             " from this file instead: " + (repeatable ? "one value a line" : "one value") +
             ", blank lines and # comments ignored")
      ->default_str(kNotGiven)
      ->option_text("PATH")
      ->force_callback();
  return option;
}

}  // namespace

CLI::Option* add_secret_option(CLI::App& app, const SecretFlag& flag,
                               std::vector<std::string>& values) {
  CLI::Option* option = app.add_option(flag.name, values);
  return add(app, flag, option, true,
             [&values](std::vector<std::string> texts) { values = std::move(texts); });
}

CLI::Option* add_secret_option(CLI::App& app, const SecretFlag& flag, std::string& value) {
  CLI::Option* option = app.add_option(flag.name, value);
  return add(app, flag, option, false,
             [&value](std::vector<std::string> texts) { value = std::move(texts.front()); });
}

}  // namespace webhooks::app
