#include "output.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <string_view>

namespace webhooks::cli {

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {  // U+0080..U+009F (C1) in UTF-8
      out += "\\u00";
      out += kHex[next >> 4];
      out += kHex[next & 0xF];
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string cell(const nlohmann::ordered_json& value) {
  if (value.is_string()) {
    return value.get_ref<const std::string&>().empty() ? "-" : printable(value.get<std::string>());
  }
  if (value.is_null()) return "-";
  const bool strings = value.is_array() && std::all_of(value.begin(), value.end(),
                                                       [](const auto& v) { return v.is_string(); });
  if (!strings) return printable(value.dump());
  if (value.empty()) return "-";
  std::string joined;
  for (const auto& v : value) joined += (joined.empty() ? "" : ", ") + v.get<std::string>();
  return printable(joined);
}

void print_list(const nlohmann::ordered_json& doc, const std::string& key,
                const std::vector<std::string>& columns, bool as_json) {
  if (as_json) {
    std::cout << doc.dump(2) << "\n";
    return;
  }
  const nlohmann::ordered_json& rows = doc.contains(key) ? doc[key] : doc;
  std::vector<std::size_t> width;
  for (const auto& c : columns) width.push_back(c.size());
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      width[i] = std::max(width[i], cell(row.value(columns[i], nlohmann::ordered_json())).size());
    }
  }
  // Each column padded to its width and two spaces, the last one not padded.
  const auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      line += cells[i];
      if (i + 1 < cells.size()) line.append(width[i] + 2 - cells[i].size(), ' ');
    }
    std::cout << line << "\n";
  };
  print_row(columns);
  for (const auto& row : rows) {
    std::vector<std::string> cells;
    for (const auto& c : columns) cells.push_back(cell(row.value(c, nlohmann::ordered_json())));
    print_row(cells);
  }
}

void print_object(const nlohmann::ordered_json& doc, bool as_json) {
  if (as_json || !doc.is_object()) {
    std::cout << doc.dump(2) << "\n";
    return;
  }
  // The id first, then the rest in their order.
  nlohmann::ordered_json lines = nlohmann::ordered_json::object();
  for (const char* id : {"id", "event_id"}) {
    if (doc.contains(id)) lines[id] = doc[id];
  }
  lines.update(doc);
  std::size_t width = 0;
  for (const auto& [name, value] : lines.items()) width = std::max(width, name.size());
  for (const auto& [name, value] : lines.items()) {
    std::cout << std::left << std::setw(static_cast<int>(width) + 2) << (name + ":") << cell(value)
              << "\n";
  }
}

std::string no_answer(httplib::Error error, std::chrono::milliseconds read_timeout) {
  using httplib::Error;
  switch (error) {
    case Error::Connection:
      return "cannot connect (connection refused or unreachable)";
    case Error::ConnectionTimeout:
      return "cannot connect (no connection within the connect timeout)";
    case Error::Read:
      return "no answer within " + std::to_string(read_timeout.count() / 1000) +
             " s (the read timeout), or the connection closed";
    case Error::Write:
      return "the connection broke while the request was sent (a body over the server's limit?)";
    case Error::SSLConnection:
      return "the TLS handshake failed (is it an http:// server?)";
    case Error::SSLServerVerification:
      return "the server's TLS certificate is not trusted";
    default:
      return httplib::to_string(error);
  }
}

}  // namespace webhooks::cli
