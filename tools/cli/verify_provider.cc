#include "verify_provider.h"

#include <cctype>
#include <iostream>

#include "cli.h"

namespace webhooks::cli {

int verify_provider(providers::Provider provider, const std::vector<std::string>& secrets,
                    const std::map<std::string, std::string>& headers, const std::string& body,
                    providers::ProviderOptions options, std::int64_t now) {
  if (secrets.empty()) throw UsageError("verify --provider needs --secret");
  const auto verifier = providers::make_provider_verifier(provider, secrets, options);
  const auto lookup = [&](std::string_view name) -> std::optional<std::string_view> {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto it = headers.find(lower);
    if (it == headers.end()) return std::nullopt;
    return std::string_view(it->second);
  };
  const providers::ProviderResult result = verifier->verify(lookup, body, now);
  if (result) {
    std::cout << "valid\nevent-id: " << result.event_id << "\n";
    return kOk;
  }
  std::cout << "invalid: " << to_string(result.status) << ": " << result.message << "\n";
  return kFailed;
}

}  // namespace webhooks::cli
