#include <deque>
#include <fstream>
#include <sstream>

#include "spawn.h"

namespace webhooks::launcher::detail {

namespace fs = std::filesystem;

std::string read_from(const fs::path& path, std::uintmax_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(offset));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::uintmax_t size_of(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

std::string tail(const fs::path& path, int lines) {
  std::ifstream in(path);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (const std::string& line : last) out += "  " + line + "\n";
  return out.empty() ? "  (empty)\n" : out;
}

}  // namespace webhooks::launcher::detail
