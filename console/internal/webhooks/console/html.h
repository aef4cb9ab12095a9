// HTML text for the consoles (docs/console.md): every dynamic value of a page goes through
// escape_html, links' query values through url_encode, and sign-in forms are read by parse_form.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace webhooks::console {

// `text` safe in HTML text and in a double- or single-quoted attribute value: & < > " ' become
// &amp; &lt; &gt; &quot; &#39;; every other byte is kept (UTF-8 passes through). Throws nothing
// but std::bad_alloc.
std::string escape_html(std::string_view text);

// `text` percent-encoded for a URL query value (RFC 3986: unreserved bytes A-Z a-z 0-9 - . _ ~
// kept, every other byte as %XX, upper-case hex).
std::string url_encode(std::string_view text);

// An application/x-www-form-urlencoded body (an HTML form's POST) as webhooks::parse_form
// (webhooks/form.h) reads it, by name: a name given twice keeps its first value.
std::map<std::string, std::string> parse_form(std::string_view body);

}  // namespace webhooks::console
