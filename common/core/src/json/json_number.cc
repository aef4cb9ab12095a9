#include "json/json_number.h"

#include <cstdlib>

namespace webhooks::detail {

Decimal parse_decimal(std::string_view token) {
  Decimal d;
  std::size_t i = 0;
  if (i < token.size() && token[i] == '-') {
    d.negative = true;
    ++i;
  }
  std::string all;  // integer and fraction digits together
  std::int64_t fraction_digits = 0;
  while (i < token.size() && token[i] >= '0' && token[i] <= '9') all.push_back(token[i++]);
  if (i < token.size() && token[i] == '.') {
    ++i;
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
      all.push_back(token[i++]);
      ++fraction_digits;
    }
  }
  std::int64_t exp = 0;
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) exp_negative = token[i++] == '-';
    int count = 0;
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
      if (exp == 0 && token[i] == '0') {
        ++i;
        continue;  // leading zeros of the exponent
      }
      if (++count > 15) {
        d.exponent_saturated = true;
      } else {
        exp = exp * 10 + (token[i] - '0');
      }
      ++i;
    }
    if (exp_negative) exp = -exp;
  }
  const std::size_t first = all.find_first_not_of('0');
  if (first == std::string::npos) {
    d.negative = false;
    return d;  // zero, whatever its spelling (-0, 0.000e5)
  }
  const std::size_t last = all.find_last_not_of('0');
  d.digits = all.substr(first, last - first + 1);
  const auto trailing = static_cast<std::int64_t>(all.size() - 1 - last);
  d.exponent = exp - fraction_digits + trailing;
  return d;
}

bool integer_magnitude(const Decimal& d, std::uint64_t& out) {
  if (d.is_zero()) {
    out = 0;
    return true;
  }
  if (!d.is_integer() || d.exponent_saturated || d.integer_digits() > 20) return false;
  std::uint64_t value = 0;
  const auto mul10 = [&value]() {
    if (value > UINT64_MAX / 10) return false;
    value *= 10;
    return true;
  };
  for (char c : d.digits) {
    if (!mul10()) return false;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > UINT64_MAX - digit) return false;
    value += digit;
  }
  for (std::int64_t z = 0; z < d.exponent; ++z) {
    if (!mul10()) return false;
  }
  out = value;
  return true;
}

bool integer_at_most(const Decimal& d, std::uint64_t limit) {
  std::uint64_t magnitude = 0;
  return integer_magnitude(d, magnitude) && magnitude <= limit;
}

std::string ecmascript_layout(bool negative, std::string_view digits, std::int64_t n) {
  std::string out;
  if (negative) out.push_back('-');
  const auto k = static_cast<std::int64_t>(digits.size());
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<std::size_t>(n));
    out += '.';
    out += digits.substr(static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    out += digits.substr(0, 1);
    if (k > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += n - 1 >= 0 ? '+' : '-';
    out += std::to_string(n - 1 >= 0 ? n - 1 : -(n - 1));
  }
  return out;
}

}  // namespace webhooks::detail
