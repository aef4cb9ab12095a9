"""orders-api's console: a merchant signed in with its API key sees its idempotency keys in each
of their three states, and only its own.

completed: POST /orders. failed: POST /payouts while the payout partner does not answer (502
partner_unavailable, --partner-attempts 1). in_progress: POST /payouts to a second orders-api on
the same database with --operation-delay 60s, still running while the page is read.
"""

import unittest

from console import ConsoleCase
from harness import Http
from stacks import Orders, eventually, free_port

KEY, MERCHANT = "sk_browser_1", "m_orders"
OTHER_KEY, OTHER_MERCHANT = "sk_browser_2", "m_other"
ORDER = {"amount": 1250, "currency": "EUR", "reference": "browser-1"}
PAYOUT = {"amount": 500, "currency": "EUR", "destination": "acct_browser"}
STATES = {"order-done": "completed", "payout-failed": "failed", "payout-waiting": "in_progress"}


class OrdersKeysConsole(ConsoleCase):
    @classmethod
    def set_up_servers(cls, work):
        partner = free_port()  # nothing listens: every payout's partner call fails
        keys = ["--api-key", f"{KEY}:{MERCHANT}", "--api-key", f"{OTHER_KEY}:{OTHER_MERCHANT}"]
        cls.orders = Orders(work, partner, keys)
        cls.addClassCleanup(cls.orders.close)
        cls.order = cls.orders.post(KEY, "/orders", "order-done", ORDER, 201)
        cls.orders.post(KEY, "/orders", "order-done", ORDER, 201)  # a replay
        cls.orders.post(KEY, "/orders", "order-done", {**ORDER, "amount": 1}, 422)  # a mismatch
        cls.orders.post(KEY, "/payouts", "payout-failed", PAYOUT, 502)
        cls.orders.post(OTHER_KEY, "/orders", "order-other", ORDER, 201)
        cls.slow = Orders(work, partner, keys + ["--operation-delay", "60s"])
        cls.addClassCleanup(cls.slow.close)
        cls.waiting = cls.slow.post_without_waiting(KEY, "/payouts", "payout-waiting", PAYOUT)
        cls.addClassCleanup(cls.waiting.close)
        lookup = Http(cls.orders.base, KEY)
        eventually(lambda: lookup.call("GET", "/v1/idempotency-keys/payout-waiting")[0] == 200,
                   "the slow payout's in_progress record")
        cls.orders.post(KEY, "/payouts", "payout-waiting", PAYOUT, 409)  # a conflict
        return cls.orders.base

    def row(self, key):
        return f"table#keys tr[data-key='{key}']"

    def listed_keys(self):
        rows = self.browser.find_all("table#keys tr[data-key]")
        return [r.get_attribute("data-key") for r in rows]

    def test_1_a_wrong_key_is_refused_and_the_merchant_key_signs_in(self):
        b = self.browser
        b.open("/console")
        self.assertEqual(b.path(), "/console/login")
        self.assertEqual(b.sign_in("sk_nobody"), "/console/login")
        self.assertTrue(b.find("#login-error").is_displayed())
        self.assertEqual(b.sign_in(KEY), "/console")

    def test_2_the_list_shows_each_key_in_its_state_and_no_other_merchants(self):
        b = self.browser
        b.open("/console")
        self.assertEqual(self.listed_keys(), ["payout-waiting", "payout-failed", "order-done"])
        for key, state in STATES.items():
            self.assertEqual(b.cell(self.row(key), "state"), state, key)
        done = self.row("order-done")
        self.assertEqual(b.cell(done, "route"), "POST /orders")
        self.assertEqual(b.cell(done, "status"), "201")
        # Counted in memory and written about once a second (docs/idempotency.md).
        b.wait_reloading(lambda page: page.cell(done, "replays") == "1", "the replay's count")
        self.assertEqual(b.cell(done, "mismatches"), "1")
        self.assertEqual(b.cell(done, "conflicts"), "0")
        self.assertEqual(b.cell(done, "resource"), self.order["id"])
        failed, waiting = self.row("payout-failed"), self.row("payout-waiting")
        self.assertEqual(b.cell(failed, "route"), "POST /payouts")
        self.assertEqual(b.cell(failed, "status"), "502")
        self.assertEqual(b.cell(failed, "resource"), "")
        self.assertEqual(b.cell(waiting, "status"), "")
        b.wait_reloading(lambda page: page.cell(waiting, "conflicts") == "1", "the 409's count")
        self.assertEqual(b.cell(waiting, "replays"), "0")
        b.screenshot("orders-keys")

    def test_3_the_state_filter(self):
        b = self.browser
        for key, state in STATES.items():
            b.open("/console?state=" + state)
            self.assertEqual(self.listed_keys(), [key], state)

    def test_4_each_key_has_its_page(self):
        b = self.browser
        for key, state in STATES.items():
            b.open("/console")
            b.find(f"{self.row(key)} a").click()
            b.wait(lambda d: b.path() == f"/console/keys/{key}", f"the page of {key}")
            self.assertEqual(b.text("#key-state"), state)
        b.open("/console/keys/order-done")
        self.assertEqual(b.text("#key-state"), "completed")
        self.assertEqual(b.text("#key-route"), "POST /orders")
        self.assertEqual(b.text("#key-status"), "201")
        self.assertEqual(b.text("#resource-id"), self.order["id"])
        self.assertEqual(b.text("#key-attempts"), "1")
        api = Http(self.orders.base, KEY).expect(200, "GET", "/v1/idempotency-keys/order-done")
        for field in ["created_at", "updated_at", "expires_at", "fingerprint"]:
            self.assertEqual(b.text("#key-" + field.removesuffix("_at")), api[field], field)
        self.assertRegex(api["fingerprint"], "^[0-9a-f]{64}$")
        b.screenshot("orders-key")


if __name__ == "__main__":
    unittest.main()
