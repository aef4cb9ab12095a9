// Headers (receiver.h): a request's header fields, looked up by case-insensitive name; the
// Standard Webhooks headers read from them (read_signed_headers).
#include <algorithm>

#include "webhooks/receiver/receiver.h"

namespace webhooks::receiver {

bool Headers::same_name(std::string_view a, std::string_view b) {
  // ASCII case folding: header names are ASCII (RFC 9110), and no locale is consulted per byte.
  constexpr auto lower = [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
  };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

template <typename F>
void Headers::each_value(std::string_view name, F&& f) const {
  struct Context {
    F& f;
    bool stopped = false;
  } context{f};
  if (visit_) {
    visit_(viewed_, name, &context, [](void* c, std::string_view value) {
      auto& ctx = *static_cast<Context*>(c);
      ctx.stopped = !ctx.f(value);
      return !ctx.stopped;
    });
    if (context.stopped) return;
  }
  for (const auto& [n, v] : entries_) {
    if (same_name(n, name) && !f(std::string_view(v))) return;
  }
}

std::optional<std::string_view> Headers::get(std::string_view name) const {
  std::optional<std::string_view> first;
  each_value(name, [&](std::string_view value) {
    first = value;
    return false;
  });
  return first;
}

std::optional<std::string> Headers::joined(std::string_view name) const {
  std::optional<std::string> out;
  each_value(name, [&](std::string_view value) {
    if (out) {
      out->push_back(' ');
      out->append(value);
    } else {
      out.emplace(value);
    }
    return true;
  });
  return out;
}

VerifyResult read_signed_headers(const Headers& headers, SignedHeaders& out,
                                 std::optional<std::string>& signature) {
  SignedHeaderNames names;
  VerifyResult chosen = choose_signed_header_names(
      [&](std::string_view name) { return headers.get(name).has_value(); }, names);
  if (!chosen) return chosen;
  signature = headers.joined(names.signature);
  out =
      SignedHeaders{headers.get(names.id), headers.get(names.timestamp),
                    signature ? std::optional<std::string_view>(*signature) : std::nullopt, names};
  return chosen;
}

}  // namespace webhooks::receiver
