#include "webhooks/canonical_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "json/canonical_writer.h"
#include "json/json_number.h"
#include "json/json_string.h"
#include "json/json_text.h"
#include "webhooks/error.h"
#include "webhooks/json_parse.h"

namespace webhooks {
namespace {

// UTF-8 (already validated by the parser) to UTF-16 code units, for RFC 8785 member order.
std::u16string to_utf16(std::string_view s) {
  std::u16string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (int k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3F);
    i += static_cast<std::size_t>(len);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
  }
  return out;
}

// ECMAScript Number::toString (ECMA-262, 7.1.12.1) from the shortest round-trip digits.
std::string format_double(double value) {
  if (value == 0) return "0";  // also -0
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + 1 + (sci[e_pos + 1] == '+'), sci.data() + sci.size(),
                  exponent);
  return detail::ecmascript_layout(!out.empty(), digits, exponent + 1);
}

// The canonical form of a number token that nlohmann read as a double (it has a fraction or an
// exponent, or is an integer beyond 64 bits). docs/idempotency.md, "Numbers and Unicode in the
// fingerprint":
// - an integer value within the 64-bit range (1000.0, 1e3, 9007199254740993.0) is written exactly,
//   as the integer tokens are, so equal values in any spelling agree;
// - a value with at most 17 significant digits is the double RFC 8785 writes (4.50 -> 4.5,
//   333333333.33333329 -> 333333333.3333333): 17 digits are what a double carries;
// - any other value (more significant digits than a double carries: 36893488147419103233,
//   1000.00000000000001) is written exactly, in the same ECMAScript layout, so tokens that one
//   double would merge stay distinct. Such output has 18 or more significant digits and so can
//   never equal the form of a double.
std::string format_number(double value, std::string_view token) {
  const detail::Decimal d = detail::parse_decimal(token);
  if (d.is_zero()) return "0";
  std::uint64_t magnitude = 0;
  if (detail::integer_magnitude(d, magnitude)) {
    if (!d.negative) return std::to_string(magnitude);
    if (magnitude <= static_cast<std::uint64_t>(INT64_MAX) + 1)
      return "-" + std::to_string(magnitude);
  }
  if (d.digits.size() <= 17) return format_double(value);
  if (d.exponent_saturated) {
    throw Error(ErrorCode::invalid_json, "invalid JSON: a number's exponent has over 15 digits");
  }
  return detail::ecmascript_layout(d.negative, d.digits,
                                   d.exponent + static_cast<std::int64_t>(d.digits.size()));
}

}  // namespace

namespace detail {

bool CanonicalWriter::null() { return emit("null"); }
bool CanonicalWriter::boolean(bool v) { return emit(v ? "true" : "false"); }
bool CanonicalWriter::number_integer(number_integer_t v) { return emit(IntegerText(v).view()); }
bool CanonicalWriter::number_unsigned(number_unsigned_t v) { return emit(IntegerText(v).view()); }
bool CanonicalWriter::number_float(number_float_t v, const string_t& raw) {
  return emit(format_number(v, raw));
}
bool CanonicalWriter::string(string_t& v) {
  return emit_with([&](std::string& out) { append_json_string(out, v); });
}
bool CanonicalWriter::start_object(std::size_t) {
  if (!enter()) return false;
  stack_.push_back(Frame{true, {}, {}, {}, {}});
  return true;
}
bool CanonicalWriter::key(string_t& k) {
  stack_.back().key16 = to_utf16(k);
  stack_.back().key_text.clear();
  append_json_string(stack_.back().key_text, k);
  return true;
}
bool CanonicalWriter::end_object() {
  Frame frame = std::move(stack_.back());
  stack_.pop_back();
  std::sort(frame.members.begin(), frame.members.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < frame.members.size(); ++i) {
    if (frame.members[i].first == frame.members[i - 1].first) {
      duplicate_ = true;
      if (stop_at_duplicate_) return false;
    }
  }
  return emit_with([&](std::string& out) {
    out.push_back('{');
    for (std::size_t i = 0; i < frame.members.size(); ++i) {
      if (i > 0) out.push_back(',');
      out += frame.members[i].second;
    }
    out.push_back('}');
  });
}
bool CanonicalWriter::start_array(std::size_t) {
  if (!enter()) return false;
  stack_.push_back(Frame{false, "[", {}, {}, {}});
  return true;
}
bool CanonicalWriter::end_array() {
  std::string text = std::move(stack_.back().text);
  stack_.pop_back();
  text.push_back(']');
  return emit(text);
}
bool CanonicalWriter::parse_error(std::size_t position, const std::string&,
                                  const nlohmann::detail::exception& ex) {
  error_ = json_parse_error_message(position, ex);
  return false;
}

std::string CanonicalWriter::error() const {
  return duplicate_ && stop_at_duplicate_ ? std::string(kDuplicateNameMessage) : error_;
}

// The depth limit (json_parse.h): with it each byte is copied into at most kMaxJsonDepth
// enclosing texts, so the work stays linear in the input.
bool CanonicalWriter::enter() {
  if (stack_.size() < kMaxJsonDepth) return true;
  error_ = json_depth_message(kMaxJsonDepth);
  return false;
}

bool CanonicalWriter::emit(std::string_view value) {
  return emit_with([&](std::string& out) { out += value; });
}

}  // namespace detail

std::string canonicalize_json(std::string_view json) {
  detail::refuse_nul_byte(json);
  detail::CanonicalWriter writer;
  const bool ok = nlohmann::json::sax_parse(json.begin(), json.end(), &writer);
  if (!ok) throw Error(ErrorCode::invalid_json, writer.error());
  return std::move(writer.result);
}

}  // namespace webhooks
