#include "delivery/retry_after.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "webhooks/error.h"

namespace webhooks::publisher {
namespace {

using namespace std::chrono;

constexpr std::array<std::string_view, 7> kShortDays = {"Mon", "Tue", "Wed", "Thu",
                                                        "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> kLongDays = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// A cursor over the text; every method consumes on success and reports failure by returning false.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  bool done() const { return pos_ == text_.size(); }
  bool literal(std::string_view s) {
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  // Exactly `n` decimal digits.
  bool digits(std::size_t n, int& out) {
    if (text_.size() - pos_ < n) return false;
    int value = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const char c = text_[pos_ + i];
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    pos_ += n;
    out = value;
    return true;
  }
  template <std::size_t N>
  bool one_of(const std::array<std::string_view, N>& names, int& index) {
    for (std::size_t i = 0; i < N; ++i) {
      if (literal(names[i])) {
        index = static_cast<int>(i);
        return true;
      }
    }
    return false;
  }
  bool time_of_day(int& h, int& m, int& s) {
    return digits(2, h) && literal(":") && digits(2, m) && literal(":") && digits(2, s);
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

struct Fields {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
};

std::optional<UnixMillis> to_unix_ms(const Fields& f) {
  if (f.year < 1900 || f.hour > 23 || f.minute > 59 || f.second > 60) return std::nullopt;
  const year_month_day date{year(f.year), month(static_cast<unsigned>(f.month + 1)),
                            day(static_cast<unsigned>(f.day))};
  if (!date.ok()) return std::nullopt;
  const auto t = sys_days(date) + hours(f.hour) + minutes(f.minute) + seconds(f.second);
  return duration_cast<milliseconds>(t.time_since_epoch()).count();
}

// The two forms that name the day before a comma: IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT"
// (short day, ' ' between the date's parts, a four-digit year) and the obsolete RFC 850
// "Sunday, 06-Nov-94 08:49:37 GMT" (long day, '-', two digits: the caller completes the year).
template <std::size_t Days>
std::optional<Fields> day_comma_date(std::string_view text,
                                     const std::array<std::string_view, Days>& day_names,
                                     std::string_view separator, std::size_t year_digits) {
  Reader r(text);
  Fields f;
  int ignored = 0;
  if (r.one_of(day_names, ignored) && r.literal(", ") && r.digits(2, f.day) &&
      r.literal(separator) && r.one_of(kMonths, f.month) && r.literal(separator) &&
      r.digits(year_digits, f.year) && r.literal(" ") &&
      r.time_of_day(f.hour, f.minute, f.second) && r.literal(" GMT") && r.done()) {
    return f;
  }
  return std::nullopt;
}

std::optional<Fields> imf_fixdate(std::string_view text) {
  return day_comma_date(text, kShortDays, " ", 4);
}

std::optional<Fields> rfc850_date(std::string_view text) {
  return day_comma_date(text, kLongDays, "-", 2);
}

// "Sun Nov  6 08:49:37 1994" (a one-digit day is padded with a space).
std::optional<Fields> asctime_date(std::string_view text) {
  Reader r(text);
  Fields f;
  int ignored = 0;
  if (!(r.one_of(kShortDays, ignored) && r.literal(" ") && r.one_of(kMonths, f.month) &&
        r.literal(" "))) {
    return std::nullopt;
  }
  if (!(r.literal(" ") ? r.digits(1, f.day) : r.digits(2, f.day))) return std::nullopt;
  if (r.literal(" ") && r.time_of_day(f.hour, f.minute, f.second) && r.literal(" ") &&
      r.digits(4, f.year) && r.done()) {
    return f;
  }
  return std::nullopt;
}

// RFC 9110, 5.6.7: the year with these last two digits within (now − 50, now + 50] years.
int complete_two_digit_year(int yy, UnixMillis now) {
  const year_month_day today{floor<days>(sys_time<milliseconds>(milliseconds(now)))};
  const int current = static_cast<int>(today.year());
  int candidate = current - current % 100 + yy;
  if (candidate > current + 50) candidate -= 100;
  if (candidate <= current - 50) candidate += 100;
  return candidate;
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<UnixMillis> parse_http_date(std::string_view text, UnixMillis now) {
  if (auto f = imf_fixdate(text)) return to_unix_ms(*f);
  if (auto f = rfc850_date(text)) {
    f->year = complete_two_digit_year(f->year, now);
    return to_unix_ms(*f);
  }
  if (auto f = asctime_date(text)) return to_unix_ms(*f);
  return std::nullopt;
}

std::optional<milliseconds> parse_retry_after(std::string_view value, UnixMillis now,
                                              const RetryAfterBounds& bounds) {
  if (bounds.min.count() < 0 || bounds.min > bounds.max) {
    throw Error(ErrorCode::invalid_argument, "Retry-After bounds need 0 <= min <= max");
  }
  const std::string_view text = trim_ows(value);
  if (text.empty()) return std::nullopt;
  milliseconds wanted{0};
  if (std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // More than 15 digits is beyond any bound and would overflow in milliseconds.
    if (text.size() > 15) return bounds.max;
    std::int64_t secs = 0;
    for (char c : text) secs = secs * 10 + (c - '0');
    wanted = seconds(secs);
  } else {
    const auto date = parse_http_date(text, now);
    if (!date) return std::nullopt;
    wanted = milliseconds(*date - now);
  }
  return std::clamp(wanted, bounds.min, bounds.max);
}

}  // namespace webhooks::publisher
