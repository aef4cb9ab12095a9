// The SAX handler behind compact_json (json_compact.h): each event written straight to `out`,
// number tokens as written. The only state is one "needs a comma" flag per open array or object,
// so the work is linear whatever the nesting. Shared with read_json_body (json_body.h).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace webhooks::detail {

class CompactWriter : public nlohmann::json_sax<nlohmann::json> {
 public:
  // `max_depth`: arrays and objects nested deeper stop the parse (json_parse.h's message).
  explicit CompactWriter(std::size_t max_depth) : max_depth_(max_depth) {}

  std::string out;    // the compact text so far
  std::string error;  // why the parse stopped

  bool null() override;
  bool boolean(bool v) override;
  bool number_integer(number_integer_t v) override;
  bool number_unsigned(number_unsigned_t v) override;
  bool number_float(number_float_t, const string_t& raw) override;
  bool string(string_t& v) override;
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override;
  bool start_array(std::size_t) override;
  bool key(string_t& k) override;
  bool end_object() override;
  bool end_array() override;
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override;

 private:
  void comma();
  bool scalar(std::string_view text);
  bool open(char bracket);
  bool close(char bracket);

  std::size_t max_depth_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool in_member_value_ = false;
};

}  // namespace webhooks::detail
