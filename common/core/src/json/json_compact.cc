#include "webhooks/json_compact.h"

#include <nlohmann/json.hpp>

#include "json/json_text.h"
#include "webhooks/error.h"

namespace webhooks {
namespace {

// Writes each SAX event straight to the output; the only state is one "needs a comma" flag per
// open array or object, so the work is linear whatever the nesting.
class CompactWriter : public nlohmann::json_sax<nlohmann::json> {
 public:
  CompactWriter(std::size_t max_depth, std::string_view member)
      : max_depth_(max_depth), member_(member) {}

  std::string out;
  std::optional<std::pair<std::size_t, std::size_t>> member_span;  // [begin, end) in out

  bool null() override { return scalar("null"); }
  bool boolean(bool v) override { return scalar(v ? "true" : "false"); }
  // nlohmann reads a token with a minus sign as number_integer, so 0 here was written "-0".
  bool number_integer(number_integer_t v) override {
    return scalar(v == 0 ? std::string("-0") : std::to_string(v));
  }
  bool number_unsigned(number_unsigned_t v) override { return scalar(std::to_string(v)); }
  bool number_float(number_float_t, const string_t& raw) override { return scalar(raw); }
  bool string(string_t& v) override { return scalar(nlohmann::json(v).dump()); }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return open('{'); }
  bool start_array(std::size_t) override { return open('['); }
  bool key(string_t& k) override {
    comma();
    const bool starts_capture = first_.size() == 1 && !member_.empty() && k == member_;
    out += nlohmann::json(k).dump();
    out.push_back(':');
    in_member_value_ = true;
    if (starts_capture) {
      capture_ = true;
      capture_begin_ = out.size();
    }
    return true;
  }
  bool end_object() override { return close('}'); }
  bool end_array() override { return close(']'); }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error = json_parse_error_message(position, ex);
    return false;
  }

  std::string error;

 private:
  void comma() {
    if (in_member_value_) {
      in_member_value_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out.push_back(',');
      first_.back() = false;
    }
  }
  bool scalar(std::string_view text) {
    comma();
    out += text;
    done_value();
    return true;
  }
  bool open(char bracket) {
    comma();
    if (first_.size() >= max_depth_) {
      error = json_depth_message(max_depth_);
      return false;
    }
    out.push_back(bracket);
    first_.push_back(true);
    return true;
  }
  bool close(char bracket) {
    first_.pop_back();
    out.push_back(bracket);
    done_value();
    return true;
  }
  // A value ended; when it was the captured top-level member's, note its span.
  void done_value() {
    if (capture_ && first_.size() == 1) {
      member_span = std::pair(capture_begin_, out.size());
      capture_ = false;
    }
  }

  std::size_t max_depth_;
  std::string_view member_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool in_member_value_ = false;
  bool capture_ = false;
  std::size_t capture_begin_ = 0;
};

CompactWriter run(std::string_view json, std::size_t max_depth, std::string_view member) {
  detail::refuse_nul_byte(json);
  CompactWriter writer(max_depth, member);
  writer.out.reserve(json.size());
  if (!nlohmann::json::sax_parse(json.begin(), json.end(), &writer)) {
    throw Error(ErrorCode::invalid_json, writer.error.empty() ? "invalid JSON" : writer.error);
  }
  return writer;
}

}  // namespace

std::string compact_json(std::string_view json, std::size_t max_depth) {
  return std::move(run(json, max_depth, {}).out);
}

std::optional<std::string> compact_json_member(std::string_view json, std::string_view name,
                                               std::size_t max_depth) {
  CompactWriter writer = run(json, max_depth, name);
  if (!writer.member_span || name.empty()) return std::nullopt;
  return writer.out.substr(writer.member_span->first,
                           writer.member_span->second - writer.member_span->first);
}

}  // namespace webhooks
