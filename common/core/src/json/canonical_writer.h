// The SAX handler behind canonicalize_json (canonical_json.h): each closed value is written in its
// canonical form into its parent, objects sorted when they close. Shared with read_json_body
// (json_body.h), which runs it in the same pass as the compact writer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace webhooks::detail {

inline constexpr std::string_view kDuplicateNameMessage =
    "invalid JSON: duplicate object member name";

class CanonicalWriter : public nlohmann::json_sax<nlohmann::json> {
 public:
  // `stop_at_duplicate`: a repeated member name stops the parse (canonicalize_json's error);
  // false: it is noted in duplicate_name() and the parse goes on (the canonical text is then not
  // to be used).
  explicit CanonicalWriter(bool stop_at_duplicate = true) : stop_at_duplicate_(stop_at_duplicate) {}

  std::string result;  // the canonical text, once the parse has succeeded

  bool null() override;
  bool boolean(bool v) override;
  bool number_integer(number_integer_t v) override;
  bool number_unsigned(number_unsigned_t v) override;
  bool number_float(number_float_t v, const string_t& raw) override;
  bool string(string_t& v) override;
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override;
  bool key(string_t& k) override;
  bool end_object() override;
  bool start_array(std::size_t) override;
  bool end_array() override;
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override;

  // Why the parse stopped (printable ASCII, json_parse.h's wording).
  std::string error() const;
  bool duplicate_name() const { return duplicate_; }

 private:
  struct Frame {
    bool is_object;
    std::string text;                                             // arrays: "[a,b"
    std::vector<std::pair<std::u16string, std::string>> members;  // objects: key16, "\"k\":v"
    std::u16string key16;
    std::string key_text;
  };

  bool enter();
  // Writes a closed value into its parent (or `result` at the top): `write(out)` appends the
  // value's canonical text to `out`, after the member's "key": or the array's comma.
  template <typename Write>
  bool emit_with(Write&& write) {
    if (stack_.empty()) {
      result.clear();
      write(result);
      return true;
    }
    Frame& top = stack_.back();
    if (top.is_object) {
      std::string member = std::move(top.key_text);
      member.push_back(':');
      write(member);
      top.members.emplace_back(std::move(top.key16), std::move(member));
    } else {
      if (top.text.size() > 1) top.text.push_back(',');
      write(top.text);
    }
    return true;
  }
  bool emit(std::string_view value);

  std::vector<Frame> stack_;
  std::string error_;
  bool stop_at_duplicate_;
  bool duplicate_ = false;
};

}  // namespace webhooks::detail
