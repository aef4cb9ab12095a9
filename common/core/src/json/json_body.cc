#include "webhooks/json_body.h"

#include "json/canonical_writer.h"
#include "json/compact_writer.h"
#include "json/json_text.h"
#include "webhooks/error.h"

namespace webhooks {
namespace {

// Hands each SAX event to the compact writer and, when asked, to the canonical writer; notes
// where each top-level member's value stands in the compact text.
class BodyReader : public nlohmann::json_sax<nlohmann::json> {
 public:
  BodyReader(std::size_t max_depth, bool canonical, JsonBody& body)
      : compact_(max_depth), canonical_(false), with_canonical_(canonical), body_(body) {}

  bool null() override {
    return scalar([&](auto& w) { return w.null(); });
  }
  bool boolean(bool v) override {
    return scalar([&](auto& w) { return w.boolean(v); });
  }
  bool number_integer(number_integer_t v) override {
    return scalar([&](auto& w) { return w.number_integer(v); });
  }
  bool number_unsigned(number_unsigned_t v) override {
    return scalar([&](auto& w) { return w.number_unsigned(v); });
  }
  bool number_float(number_float_t v, const string_t& raw) override {
    return scalar([&](auto& w) { return w.number_float(v, raw); });
  }
  bool string(string_t& v) override {
    if (depth_ == 1 && in_top_member_) body_.members.back().string = v;
    return scalar([&](auto& w) { return w.string(v); });
  }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t n) override {
    return open(both([&](auto& w) { return w.start_object(n); }));
  }
  bool start_array(std::size_t n) override {
    return open(both([&](auto& w) { return w.start_array(n); }));
  }
  bool key(string_t& k) override {
    if (!both([&](auto& w) { return w.key(k); })) return false;
    if (depth_ == 1) {
      body_.members.push_back({k, compact_.out.size(), 0, std::nullopt});
      in_top_member_ = true;
    }
    return true;
  }
  bool end_object() override {
    return close(both([&](auto& w) { return w.end_object(); }));
  }
  bool end_array() override {
    return close(both([&](auto& w) { return w.end_array(); }));
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& ex) override {
    compact_.parse_error(position, token, ex);
    return false;
  }

  std::string error() const {
    return !compact_.error.empty() ? compact_.error : canonical_.error();
  }
  // Room for a compact text as long as the body, so that writing it never reallocates.
  void reserve(std::size_t bytes) { compact_.out.reserve(bytes); }
  std::string take_compact() { return std::move(compact_.out); }
  std::string take_canonical() { return std::move(canonical_.result); }
  bool duplicate_name() const { return canonical_.duplicate_name(); }

 private:
  template <typename Event>
  bool both(Event&& event) {
    return event(compact_) && (!with_canonical_ || event(canonical_));
  }
  template <typename Event>
  bool scalar(Event&& event) {
    if (!both(event)) return false;
    value_ended();
    return true;
  }
  bool open(bool ok) {
    ++depth_;
    return ok;
  }
  bool close(bool ok) {
    --depth_;
    if (ok) value_ended();
    return ok;
  }
  // A value ended; when it was a top-level member's, its span is complete.
  void value_ended() {
    if (depth_ == 1 && in_top_member_) {
      body_.members.back().end = compact_.out.size();
      in_top_member_ = false;
    }
  }

  detail::CompactWriter compact_;
  detail::CanonicalWriter canonical_;
  bool with_canonical_;
  JsonBody& body_;
  std::size_t depth_ = 0;
  bool in_top_member_ = false;
};

// Validates and reads one top-level string member; builds nothing else.
class ObjectScanner : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit ObjectScanner(std::string_view member) : member_(member) {}

  JsonObjectScan scan;
  std::string error;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t& v) override {
    if (depth_ == 1 && wanted_) scan.member = std::move(v);
    return value();
  }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override {
    if (depth_ == 0) scan.is_object = true;
    return open();
  }
  bool start_array(std::size_t) override { return open(); }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      wanted_ = k == member_;
      if (wanted_) scan.member.reset();  // a repeated name: the last one counts
    }
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error = json_parse_error_message(position, ex);
    return false;
  }

 private:
  bool value() {
    if (depth_ == 1) wanted_ = false;
    return true;
  }
  bool open() {
    if (depth_ == 1) wanted_ = false;
    if (++depth_ <= kMaxJsonDepth) return true;
    error = json_depth_message(kMaxJsonDepth);
    return false;
  }
  bool close() {
    --depth_;
    return true;
  }

  std::string_view member_;
  std::size_t depth_ = 0;
  bool wanted_ = false;
};

}  // namespace

JsonObjectScan scan_json_object(std::string_view body, std::string_view member) {
  detail::refuse_nul_byte(body);
  ObjectScanner scanner(member);
  if (!nlohmann::json::sax_parse(body.begin(), body.end(), &scanner)) {
    throw Error(ErrorCode::invalid_json, scanner.error.empty() ? "invalid JSON" : scanner.error);
  }
  return std::move(scanner.scan);
}

const JsonBody::Member* JsonBody::find(std::string_view name) const {
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    if (it->name == name) return &*it;
  }
  return nullptr;
}

JsonBody::Member* JsonBody::find(std::string_view name) {
  return const_cast<Member*>(static_cast<const JsonBody&>(*this).find(name));
}

std::string_view JsonBody::text(const Member& member) const {
  return std::string_view(compact).substr(member.begin, member.end - member.begin);
}

JsonBody read_json_body(std::string_view body, bool canonical, std::size_t max_depth) {
  detail::refuse_nul_byte(body);
  JsonBody read;
  BodyReader reader(max_depth, canonical, read);
  reader.reserve(body.size());
  if (!nlohmann::json::sax_parse(body.begin(), body.end(), &reader)) {
    const std::string error = reader.error();
    throw Error(ErrorCode::invalid_json, error.empty() ? "invalid JSON" : error);
  }
  read.compact = reader.take_compact();
  read.duplicate_name = reader.duplicate_name();
  if (canonical && !read.duplicate_name) read.canonical = reader.take_canonical();
  if (!read.is_object()) read.members.clear();
  return read;
}

}  // namespace webhooks
