// webhooks verify --provider: other providers' deliveries checked offline, on their published
// vectors (tests/common/signing/provider_vectors.h gives the sources).
#include "../../common/signing/provider_vectors.h"
#include "cli_run.h"
#include "webhooks/providers/github.h"

using namespace webhooks::test;
using namespace provider_test;

TEST_CASE("verify --provider github and slack: the documented examples") {
  const std::string dir = temp_dir("cli-provider");
  const std::string body = write(dir, "github.body", kGithubBody);
  const std::string headers =
      write(dir, "github.headers",
            "X-Hub-Signature-256: " + kGithubSignature + "\nX-GitHub-Delivery: d-1\n");
  const std::string args = " --headers-file " + headers + " --body-file " + body;
  check_cli("verify --provider github --secret \"It's a Secret to Everybody\"" + args, 0,
            "valid\nevent-id: d-1\n");
  check_cli("verify --provider github --secret 'wrong'" + args, 1,
            "invalid: bad_signature: no signature in X-Hub-Signature-256 matches any configured "
            "secret\n");

  const std::string slack = message_files(
      dir, "slack",
      "x-slack-signature: " + kSlackSignature + "\nx-slack-request-timestamp: 1531420618\n",
      kSlackBody);
  const Run run =
      cli("verify --provider slack --secret " + kSlackSecret + " --now 1531420918" + slack);
  CHECK(run.out ==
        "invalid: missing_id: the body is not a JSON object, so it has no \"event_id\" to dedup "
        "on\n");
  check_cli("verify --provider slack --secret " + kSlackSecret + " --now 1531420919" + slack, 1,
            "invalid: timestamp_too_old: X-Slack-Request-Timestamp is 301 s old; the tolerance is "
            "300 s\n");
}

TEST_CASE("verify --provider stripe and shopify; usage errors") {
  const std::string dir = temp_dir("cli-provider-2");
  const std::string stripe =
      message_files(dir, "stripe", "Stripe-Signature: t=12345,v1=" + kStripeV1 + "\n", kStripeBody);
  Run run = cli("verify --provider stripe --secret whsec_test_secret --no-tolerance" + stripe);
  CHECK(run.out == "valid\nevent-id: evt_test_webhook\n");
  const std::string shopify = message_files(
      dir, "shopify", "X-Shopify-Hmac-Sha256: " + kShopifyHmac + "\nX-Shopify-Webhook-Id: w-1\n",
      kShopifyBody);
  run = cli("verify --provider shopify --secret test-webhook-secret" + shopify);
  CHECK(run.out == "valid\nevent-id: w-1\n");
  run = cli("verify --provider paypal --secret x" + shopify);
  CHECK(run.code == 2);
  CHECK(run.out.find("--provider: unknown provider paypal (one of standard, stripe, github, "
                     "shopify, slack)") == 0);
  check_usage_error(
      "verify --provider shopify" + shopify,
      "webhooks: verify --provider shopify needs the provider's secret: give --secret, "
      "--secret-file or WEBHOOKS_SECRET (or WEBHOOKS_SECRET_FILE)\n");
}

TEST_CASE("verify --provider: shopify's events family, a github form body, repeated lines") {
  const std::string dir = temp_dir("cli-provider-3");
  const std::string shopify =
      message_files(dir, "shopify",
                    "shopify-hmac-sha256: " + kShopifyHmac +
                        "\nshopify-webhook-id: w-2\nshopify-topic: orders/create\n",
                    kShopifyBody);
  check_cli("verify --provider shopify --secret test-webhook-secret" + shopify, 0,
            "valid\nevent-id: w-2\n");
  // A GitHub form delivery is signed over the raw form body, as the receiver checks it.
  const std::string form = "payload=%7B%22zen%22%3A%22Design+for+failure.%22%7D";
  const std::string github_headers =
      "X-Hub-Signature-256: " + webhooks::providers::github::sign("gh secret", form) +
      "\nX-GitHub-Delivery: d-9\n";
  const Run run = cli("verify --provider github --secret 'gh secret' --headers-file " +
                      write(dir, "form.headers",
                            github_headers + "Content-Type: application/x-www-form-urlencoded\n") +
                      " --body-file " + write(dir, "form.body", form));
  CHECK(run.out == "valid\nevent-id: d-9\n");
  // A second signature line is refused, in either order, as the receiver's edge refuses it.
  const std::string bad = "X-Hub-Signature-256: sha256=" + std::string(64, '0') + "\n";
  const std::pair<std::string, std::string> orders[] = {{github_headers + bad, "1 and 3"},
                                                        {bad + github_headers, "1 and 2"}};
  for (const auto& [lines, where] : orders) {
    check_cli("verify --provider github --secret 'gh secret' --headers-file " +
                  write(dir, "repeated.headers", lines) + " --body-file " + dir + "/form.body",
              1,
              "invalid: bad_request: send one X-Hub-Signature-256 header (lines " + where + ")\n");
  }
}
