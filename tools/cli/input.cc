#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"

namespace webhooks::cli {

std::string read_input(const std::string& path) {
  std::ostringstream out;
  if (path == "-") {
    out << std::cin.rdbuf();
    return out.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read " + path);
  out << in.rdbuf();
  return out.str();
}

std::map<std::string, std::string> parse_header_lines(const std::string& text) {
  std::map<std::string, std::string> headers;
  std::istringstream in(text);
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
    headers[name] = value;
  }
  return headers;
}

}  // namespace webhooks::cli
