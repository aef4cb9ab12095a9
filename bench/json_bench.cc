// The JSON readers on hostile shapes: nested arrays (refused at depth 129) and flat bodies of the
// same size, at 256 KiB, 512 KiB and 1 MiB, so the figures show the cost is linear in the body.
// Before the depth limit, canonical JSON of 1 MiB of nested arrays took ~19 s (issue 12).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "webhooks/canonical_json.h"
#include "webhooks/error.h"
#include "webhooks/json_compact.h"
#include "webhooks/json_parse.h"

namespace {

// Median of 5 runs of `op`, in milliseconds.
double millis(const std::function<void()>& op) {
  double best[5];
  for (double& t : best) {
    const auto start = std::chrono::steady_clock::now();
    op();
    t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  std::sort(best, best + 5);
  return best[2];
}

void refused(const std::function<void()>& op) {
  try {
    op();
  } catch (const webhooks::Error&) {
  }
}

}  // namespace

int main() {
  std::printf(
      "JSON readers, median of 5 runs (ms): nested = '[' x n/2 + ']' x n/2 (refused at depth "
      "129), flat = [1,2,...] of the same size, flat@128 = flat inside 127 more arrays\n");
  std::printf("%-9s %-7s %14s %12s %13s %22s\n", "size", "shape", "canonicalize", "parse_json",
              "compact_json", "nlohmann::json::parse");
  for (std::size_t size : {256u << 10, 512u << 10, 1u << 20}) {
    const std::string nested = std::string(size / 2, '[') + std::string(size / 2, ']');
    std::string flat = "[";
    for (int i = 0; flat.size() < size - 8; ++i) flat += std::to_string(i % 100000) + ",";
    flat += "0]";
    // The worst accepted shape for canonical JSON, which copies each closed level into its parent:
    // the flat array at the bottom of 127 levels.
    const std::string deep128 = std::string(127, '[') + flat + std::string(127, ']');
    for (const auto& [shape, text] : {std::pair<const char*, const std::string*>{"nested", &nested},
                                      {"flat", &flat},
                                      {"flat@128", &deep128}}) {
      const std::string& body = *text;
      const double canonical = millis([&] { refused([&] { webhooks::canonicalize_json(body); }); });
      const double parsed = millis([&] { refused([&] { webhooks::parse_json(body); }); });
      const double compact = millis([&] { refused([&] { webhooks::compact_json(body); }); });
      const double unbounded = millis([&] {
        const nlohmann::json tree = nlohmann::json::parse(body, nullptr, false);
        if (tree.is_discarded()) std::printf("(nlohmann refused the %s body)\n", shape);
      });
      std::printf("%-9s %-7s %14.2f %12.2f %13.2f %22.2f\n",
                  (std::to_string(size >> 10) + " KiB").c_str(), shape, canonical, parsed, compact,
                  unbounded);
    }
  }
  return 0;
}
