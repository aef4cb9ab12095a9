#include "webhooks/json_parse.h"

#include "json/json_number.h"
#include "json/json_text.h"
#include "webhooks/error.h"

namespace webhooks {
namespace {

constexpr std::uint64_t kTwoTo53 = 9007199254740992ULL;

// nlohmann's own tree builder, with a depth count in front of it: returning false from a SAX event
// stops the (iterative) parser at once, so a refused document costs no more than its prefix.
template <typename Json>
class BoundedDomParser : public nlohmann::detail::json_sax_dom_parser<Json> {
  using Base = nlohmann::detail::json_sax_dom_parser<Json>;

 public:
  BoundedDomParser(Json& result, const JsonParseOptions& options)
      : Base(result, false), options_(options) {}

  bool number_float(typename Json::number_float_t value, const typename Json::string_t& raw) {
    if (options_.integral_floats_as_integers) {
      const detail::Decimal d = detail::parse_decimal(raw);
      std::uint64_t magnitude = 0;
      if (detail::integer_magnitude(d, magnitude) && magnitude <= kTwoTo53) {
        if (d.negative) {
          return Base::number_integer(-static_cast<typename Json::number_integer_t>(magnitude));
        }
        return Base::number_unsigned(magnitude);
      }
    }
    return Base::number_float(value, raw);
  }
  bool start_object(std::size_t n) { return enter() && Base::start_object(n); }
  bool start_array(std::size_t n) { return enter() && Base::start_array(n); }
  bool end_object() {
    --depth_;
    return Base::end_object();
  }
  bool end_array() {
    --depth_;
    return Base::end_array();
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) {
    message_ = json_parse_error_message(position, ex);
    return false;
  }

  const std::string& message() const { return message_; }

 private:
  bool enter() {
    if (++depth_ <= options_.max_depth) return true;
    message_ = json_depth_message(options_.max_depth);
    return false;
  }

  const JsonParseOptions& options_;
  std::size_t depth_ = 0;
  std::string message_;
};

template <typename Json>
Json parse_bounded(std::string_view text, const JsonParseOptions& options) {
  detail::refuse_nul_byte(text);
  Json result;
  BoundedDomParser<Json> builder(result, options);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &builder);
  if (!ok) {
    throw Error(ErrorCode::invalid_json,
                builder.message().empty() ? "invalid JSON" : builder.message());
  }
  return result;
}

}  // namespace

void detail::refuse_nul_byte(std::string_view text) {
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw Error(ErrorCode::invalid_json, "invalid JSON: NUL byte at byte offset " +
                                             std::to_string(nul) +
                                             " (write it as \\u0000 inside a string)");
  }
}

std::string json_depth_message(std::size_t max_depth) {
  return "invalid JSON: nested deeper than the limit of " + std::to_string(max_depth) +
         " arrays and objects";
}

std::string json_parse_error_message(std::size_t byte, const std::exception& ex) {
  std::string reason = ex.what();
  // "[json.exception.parse_error.101] parse error at line 1, column 2: REASON; last read: '...'"
  if (const auto bracket = reason.find("] ");
      reason.starts_with("[json.exception.") && bracket != std::string::npos) {
    reason.erase(0, bracket + 2);
  }
  if (const auto colon = reason.find(": ");
      reason.starts_with("parse error at line") && colon != std::string::npos) {
    reason.erase(0, colon + 2);
  }
  if (const auto last = reason.find("; last read"); last != std::string::npos) {
    const auto expected = reason.find("; expected", last);
    reason = reason.substr(0, last) +
             (expected == std::string::npos ? std::string() : reason.substr(expected));
  }
  // "number overflow parsing '<token>'" (out_of_range.406) quotes the whole number token: a
  // 900,000-digit number came back in a 900 KB error body. Name the problem, not the bytes.
  if (const auto quoted = reason.find(" parsing '"); quoted != std::string::npos) {
    reason = reason.substr(0, quoted) + ": the number is beyond the range of a double";
  }
  // Any other reason that grew with the input is cut, so no error body echoes a client's body.
  constexpr std::size_t kReasonMax = 200;
  if (reason.size() > kReasonMax) reason.resize(kReasonMax);
  for (char& c : reason) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return "invalid JSON at byte " + std::to_string(byte) + ": " + reason;
}

nlohmann::json parse_json(std::string_view text, const JsonParseOptions& options) {
  return parse_bounded<nlohmann::json>(text, options);
}

nlohmann::json parse_json_or_discarded(std::string_view text, const JsonParseOptions& options) {
  try {
    return parse_bounded<nlohmann::json>(text, options);
  } catch (const Error&) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
}

nlohmann::ordered_json parse_ordered_json(std::string_view text, const JsonParseOptions& options) {
  return parse_bounded<nlohmann::ordered_json>(text, options);
}

}  // namespace webhooks
