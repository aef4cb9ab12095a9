// A JSON request body read once: what a handler reads of it and what the idempotency fingerprint
// hashes come from one parse (the publisher's ingest: its members, its event data and its
// Idempotency-Key fingerprint), instead of one parse each.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhooks/json_parse.h"

namespace webhooks {

struct JsonBody {
  // A member of the top-level object.
  struct Member {
    std::string name;
    std::size_t begin = 0, end = 0;     // its value's span in `compact`
    std::optional<std::string> string;  // its value when that is a string, unescaped
  };

  // compact_json(body): number tokens as written, strings re-escaped (json_compact.h).
  std::string compact;
  // canonicalize_json(body) (canonical_json.h), when read_json_body was asked for it and the body
  // has no repeated member name; else empty.
  std::string canonical;
  // true when an object of the body repeats a member name: canonicalize_json refuses such a body.
  bool duplicate_name = false;
  // The top-level object's members in document order; empty when the body is not an object.
  std::vector<Member> members;

  bool is_object() const { return compact.starts_with('{'); }
  // The member called `name` (the last one if the name repeats, as a tree keeps it), or nullptr.
  const Member* find(std::string_view name) const;
  Member* find(std::string_view name);
  // A member's value as compact JSON text (a view into `compact`).
  std::string_view text(const Member& member) const;
};

// Reads `body` in one pass, with parse_json's limits (nesting at most `max_depth` deep, strict
// UTF-8, no raw NUL byte). `canonical`: also write the canonical form. Time and memory linear in
// body.size(). Throws webhooks::Error(ErrorCode::invalid_json) with parse_json's message when
// `body` is not valid JSON.
JsonBody read_json_body(std::string_view body, bool canonical,
                        std::size_t max_depth = kMaxJsonDepth);

// What scan_json_object found: whether the text is an object, and the string value of the member
// asked for.
struct JsonObjectScan {
  bool is_object = false;
  std::optional<std::string> member;  // the top-level member's value (the last one if the name
                                      // repeats) when it is a string; else std::nullopt
};

// Checks `body` as parse_json would (nesting at most kMaxJsonDepth deep, strict UTF-8, no raw NUL
// byte) without building a tree, and reads one top-level string member: the receiver's check of a
// delivery and its "type", where the handler may never look at the tree (receiver.h,
// Event::payload()). Time linear in body.size(), memory bounded by the longest string. Throws
// webhooks::Error(ErrorCode::invalid_json) with parse_json's message when `body` is not valid JSON.
JsonObjectScan scan_json_object(std::string_view body, std::string_view member);

}  // namespace webhooks
