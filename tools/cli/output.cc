#include "output.h"

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace webhooks::cli {

std::string cell(const nlohmann::ordered_json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "-";
  const bool strings = value.is_array() && std::all_of(value.begin(), value.end(),
                                                       [](const auto& v) { return v.is_string(); });
  if (!strings) return value.dump();
  if (value.empty()) return "-";
  std::string joined;
  for (const auto& v : value) joined += (joined.empty() ? "" : ", ") + v.get<std::string>();
  return joined;
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
  for (std::size_t i = 0; i < columns.size(); ++i)
    std::cout << std::left << std::setw(static_cast<int>(width[i]) + 2) << columns[i];
  std::cout << "\n";
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      std::cout << std::left << std::setw(static_cast<int>(width[i]) + 2)
                << cell(row.value(columns[i], nlohmann::ordered_json()));
    }
    std::cout << "\n";
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

}  // namespace webhooks::cli
