#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>

#include "cli.h"
#include "header_lines.h"
#include "webhooks/error.h"
#include "webhooks/http_server.h"
#include "webhooks/json_compact.h"
#include "webhooks/json_parse.h"

namespace webhooks::cli {

std::string read_input(const std::string& path) {
  if (path.empty())
    throw UsageError("a file name is missing (give a path, or - for standard input)");
  const int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw UsageError("cannot read " + path + ": " + std::strerror(errno));
  std::string out;
  char buffer[65536];
  int error = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    if (out.size() + static_cast<std::size_t>(n) > kMaxInputBytes) {
      error = EFBIG;
      break;
    }
    out.append(buffer, static_cast<std::size_t>(n));
  }
  if (fd != STDIN_FILENO) ::close(fd);
  const std::string name = path == "-" ? std::string("standard input") : path;
  if (error == EFBIG) {
    throw UsageError(name + " is larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB");
  }
  if (error != 0) throw UsageError("cannot read " + name + ": " + std::strerror(error));
  return out;
}

std::pair<std::string, std::string> parse_header_flag(const std::string& text) {
  // RFC 9110, section 5.6.2: token = 1*tchar.
  constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  const std::size_t colon = text.find(':');
  const std::string name = text.substr(0, colon);
  const bool token = !name.empty() && std::all_of(name.begin(), name.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kSymbols.find(c) != std::string::npos;
  });
  if (colon == std::string::npos || !token ||
      text.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    throw UsageError("--header must be \"Name: value\", not \"" + text + "\"");
  }
  std::string value = text.substr(colon + 1);
  const std::size_t start = value.find_first_not_of(" \t");
  value = start == std::string::npos ? "" : value.substr(start);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
  return {name, value};
}

std::string read_event_data(const std::string& data, const std::string& data_file) {
  if (!data.empty() && !data_file.empty()) {
    throw UsageError("--data and --data-file were both given; give one of them");
  }
  if (data.empty() && data_file.empty()) {
    throw UsageError("give the event's data: --data JSON (or @FILE) or --data-file FILE");
  }
  const std::string flag = !data_file.empty()      ? "--data-file " + data_file
                           : data.starts_with("@") ? "--data " + data
                                                   : std::string("--data");
  const std::string text = !data_file.empty()      ? read_input(data_file)
                           : data.starts_with("@") ? read_input(data.substr(1))
                                                   : data;
  std::string compact;
  try {
    compact = compact_json(text, kMaxJsonDepth - 1);
  } catch (const Error& e) {
    throw UsageError(flag + " is not JSON: " + e.what());
  }
  if (!compact.starts_with('{')) throw UsageError(flag + " must be a JSON object");
  return compact;
}

receiver::Headers parse_header_lines(const std::string& text, std::string& refusal) {
  receiver::Headers headers;
  std::map<std::string_view, int> single_lines;  // a single header's canonical name: its line
  // A UTF-8 byte order mark (an editor's) is not part of the first header's name.
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  std::istringstream in(std::string_view(text).starts_with(kByteOrderMark)
                            ? text.substr(kByteOrderMark.size())
                            : text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) {
      throw UsageError("headers line " + std::to_string(number) + " is not 'name: value'");
    }
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    const std::size_t start = value.find_first_not_of(" \t");
    value = start == std::string::npos ? "" : value.substr(start);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
    // RFC 9110, section 5.5: a field value holds no control but HTAB (the servers answer 400).
    const auto control = [](unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7F; };
    if (refusal.empty() && std::any_of(value.begin(), value.end(), control)) {
      refusal = "the value of header " + name.substr(0, 64) + " holds a control character (line " +
                std::to_string(number) + ")";
    }
    if (const std::string_view single = http::single_header(name); !single.empty()) {
      const auto [first, inserted] = single_lines.emplace(single, number);
      if (!inserted && refusal.empty()) {
        refusal = "send one " + std::string(single) + " header (lines " +
                  std::to_string(first->second) + " and " + std::to_string(number) + ")";
      }
    }
    headers.add(std::move(name), std::move(value));
  }
  return headers;
}

}  // namespace webhooks::cli
