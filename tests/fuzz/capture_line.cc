// The CLI's capture lines (tools/cli/capture.h): `webhooks replay --capture` reading a file
// that `webhooks listen --capture` wrote.
// Input: the text of a capture file.
// Properties: parse_capture returns or throws cli::UsageError "capture:LINE: ..." and nothing
// else; every delivery it returns, written again with capture_line, reads back the same; the
// input taken as a header value and a body (any bytes, as a client may send them) is written by
// capture_line without throwing and reads back as one delivery, byte-exact when valid UTF-8.
#include <string>

#include "capture.h"
#include "cli.h"
#include "fuzz_check.h"

namespace {

bool valid_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace webhooks::cli;
  {
    const std::string raw(fuzz::text(data, size));
    const nlohmann::json headers{
        {"webhook-id", "evt_1"}, {"webhook-event-type", raw}, {"webhook-signature", raw}};
    const std::string line = capture_line(headers, raw);
    FUZZ_CHECK(line.find('\n') == std::string::npos);
    const std::vector<Captured> written = parse_capture(line + "\n", "written");
    FUZZ_CHECK(written.size() == 1 && written[0].id == "evt_1" && written[0].type.has_value());
    if (valid_utf8(raw)) FUZZ_CHECK(written[0].body == raw && *written[0].type == raw);
  }
  std::vector<Captured> deliveries;
  try {
    deliveries = parse_capture(fuzz::text(data, size), "capture");
  } catch (const UsageError& e) {
    FUZZ_CHECK(std::string_view(e.what()).rfind("capture:", 0) == 0);
    return 0;
  }
  std::string file;
  for (const Captured& d : deliveries) {
    nlohmann::json headers{{"webhook-id", d.id}};
    if (d.type) headers["webhook-event-type"] = *d.type;
    file += capture_line(headers, d.body) + "\n";
  }
  const std::vector<Captured> again = parse_capture(file, "again");
  FUZZ_CHECK(again.size() == deliveries.size());
  for (std::size_t i = 0; i < again.size(); ++i) {
    FUZZ_CHECK(again[i].id == deliveries[i].id);
    FUZZ_CHECK(again[i].body == deliveries[i].body);
    FUZZ_CHECK(again[i].type == deliveries[i].type);
  }
  return 0;
}
