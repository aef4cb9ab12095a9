#include "webhooks/json_compact.h"

#include "json/compact_writer.h"
#include "json/json_number.h"
#include "json/json_string.h"
#include "json/json_text.h"
#include "webhooks/error.h"

namespace webhooks {
namespace detail {

bool CompactWriter::null() { return scalar("null"); }
bool CompactWriter::boolean(bool v) { return scalar(v ? "true" : "false"); }
// nlohmann reads a token with a minus sign as number_integer, so 0 here was written "-0".
bool CompactWriter::number_integer(number_integer_t v) {
  return scalar(v == 0 ? std::string_view("-0") : IntegerText(v).view());
}
bool CompactWriter::number_unsigned(number_unsigned_t v) { return scalar(IntegerText(v).view()); }
bool CompactWriter::number_float(number_float_t, const string_t& raw) { return scalar(raw); }
bool CompactWriter::string(string_t& v) {
  comma();
  append_json_string(out, v);
  return true;
}
bool CompactWriter::start_object(std::size_t) { return open('{'); }
bool CompactWriter::start_array(std::size_t) { return open('['); }
bool CompactWriter::key(string_t& k) {
  comma();
  append_json_string(out, k);
  out.push_back(':');
  in_member_value_ = true;
  return true;
}
bool CompactWriter::end_object() { return close('}'); }
bool CompactWriter::end_array() { return close(']'); }
bool CompactWriter::parse_error(std::size_t position, const std::string&,
                                const nlohmann::detail::exception& ex) {
  error = json_parse_error_message(position, ex);
  return false;
}

void CompactWriter::comma() {
  if (in_member_value_) {
    in_member_value_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out.push_back(',');
    first_.back() = false;
  }
}

bool CompactWriter::scalar(std::string_view text) {
  comma();
  out += text;
  return true;
}

bool CompactWriter::open(char bracket) {
  comma();
  if (first_.size() >= max_depth_) {
    error = json_depth_message(max_depth_);
    return false;
  }
  out.push_back(bracket);
  first_.push_back(true);
  return true;
}

bool CompactWriter::close(char bracket) {
  first_.pop_back();
  out.push_back(bracket);
  return true;
}

}  // namespace detail

std::string compact_json(std::string_view json, std::size_t max_depth) {
  detail::refuse_nul_byte(json);
  detail::CompactWriter writer(max_depth);
  writer.out.reserve(json.size());
  if (!nlohmann::json::sax_parse(json.begin(), json.end(), &writer)) {
    throw Error(ErrorCode::invalid_json, writer.error.empty() ? "invalid JSON" : writer.error);
  }
  return std::move(writer.out);
}

}  // namespace webhooks
