#include "signing/verify_provider.h"

#include <iostream>

#include "cli.h"

namespace webhooks::cli {

int verify_provider(providers::Provider provider, const std::vector<std::string>& secrets,
                    const receiver::Headers& headers, const std::string& body,
                    providers::ProviderOptions options, std::int64_t now) {
  const auto verifier = providers::make_provider_verifier(provider, secrets, options);
  const auto lookup = [&](std::string_view name) { return headers.get(name); };
  const providers::ProviderResult result = verifier->verify(lookup, body, now);
  if (result) {
    std::cout << "valid\nevent-id: " << result.event_id << "\n";
    return kOk;
  }
  std::cout << "invalid: " << to_string(result.status) << ": " << result.message << "\n";
  return kFailed;
}

}  // namespace webhooks::cli
