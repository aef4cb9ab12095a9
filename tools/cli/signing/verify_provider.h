// webhooks verify --provider stripe|github|shopify|slack: another provider's delivery checked
// offline (webhooks/providers/*.h). sign_verify.cc hands it the parsed inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "webhooks/providers/provider.h"
#include "webhooks/receiver/receiver.h"

namespace webhooks::cli {

// Prints "valid" and "event-id: <id>" (kOk), or "invalid: <status>: <message>" (kFailed).
// `headers`: parse_header_lines (the first line of a repeated name counts, as in the receiver).
// `secrets`: at least one (run_verify says so first). `now`: Unix seconds.
int verify_provider(providers::Provider provider, const std::vector<std::string>& secrets,
                    const receiver::Headers& headers, const std::string& body,
                    providers::ProviderOptions options, std::int64_t now);

}  // namespace webhooks::cli
