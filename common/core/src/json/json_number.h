// The exact decimal value of a JSON number token, for the readers that must not round numbers
// through a double (canonical JSON, the bounded parser's integral-float option).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace webhooks::detail {

// value = (negative ? -1 : 1) * digits * 10^exponent. `digits` has no leading or trailing zeros;
// it is empty for zero (then negative is false and exponent 0).
struct Decimal {
  bool negative = false;
  std::string digits;
  std::int64_t exponent = 0;
  bool exponent_saturated = false;  // the token's exponent had more than 15 digits

  bool is_zero() const { return digits.empty(); }
  bool is_integer() const { return exponent >= 0; }
  // Digits of the integer part once written out (only meaningful when is_integer()).
  std::int64_t integer_digits() const {
    return static_cast<std::int64_t>(digits.size()) + exponent;
  }
};

// Reads a token that nlohmann's lexer accepted as a JSON number (RFC 8259 section 6 grammar):
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?. Linear in the token's length.
Decimal parse_decimal(std::string_view token);

// True when the value is an integer with |value| <= limit (limit < 10^19).
bool integer_at_most(const Decimal& d, std::uint64_t limit);

// The value as an unsigned magnitude when is_integer() and it fits 64 bits.
bool integer_magnitude(const Decimal& d, std::uint64_t& out);

// ECMAScript Number::toString layout (ECMA-262 7.1.12.1) of digits * 10^(n - k), k = digits.size():
// plain digits up to 21 integer digits, "0.000ddd" down to 10^-6, exponent form otherwise.
std::string ecmascript_layout(bool negative, std::string_view digits, std::int64_t n);

// A 64-bit integer's decimal text (with its minus sign), written without allocating: what the
// compact and canonical writers emit for an integer token.
class IntegerText {
 public:
  template <typename Integer>
  explicit IntegerText(Integer value)
      : size_(static_cast<std::size_t>(std::to_chars(digits_, digits_ + sizeof digits_, value).ptr -
                                       digits_)) {}
  std::string_view view() const { return {digits_, size_}; }

 private:
  char digits_[24];  // 20 digits of a 64-bit value and a sign
  std::size_t size_;
};

}  // namespace webhooks::detail
