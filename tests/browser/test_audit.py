"""The publisher console's audit log (docs/security.md, "The audit log"): a wrong token, a
sign-in and a Disable pressed on an endpoint's page appear on /console/audit, newest first, with
the actor, the target linked to its page and the outcome; the filter form narrows the list to one
action. A viewer's session reads the same page."""

import unittest

from console import ConsoleCase
from stacks import Publisher, new_secret

MERCHANT = "m_audit"
VIEWER = "bob:viewer_" + new_secret()[6:30]


class AuditConsole(ConsoleCase):
    @classmethod
    def set_up_servers(cls, work):
        cls.publisher = p = Publisher(work, flags=("--viewer-token", VIEWER))
        cls.addClassCleanup(p.close)
        cls.endpoint = p.add_endpoint(MERCHANT, 9, new_secret())  # nothing is delivered
        return p.base

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        b = cls.browser
        assert b.sign_in("not-the-token") == "/console/login"
        assert b.sign_in(cls.publisher.token) == "/console"
        b.open(f"/console/endpoints/{cls.endpoint}")
        cls.disabled = b.act("disable")

    def rows(self):
        """(actor, action, target, outcome, status, detail, client) of each row, in order."""
        return [tuple(row.find_element("css selector", f"td.{name}").text
                      for name in ["actor", "action", "target", "outcome", "status", "detail",
                                   "client"])
                for row in self.browser.find_all("table#audit tr[data-audit-id]")]

    def test_1_the_audit_page_lists_the_actions_newest_first(self):
        b = self.browser
        self.assertEqual(self.disabled, "disable: done (200)")
        b.find("#nav-audit").click()
        b.wait_for("table#audit")
        self.assertEqual(b.path(), "/console/audit")
        # The endpoint's creation came through the API with the admin token, before the sign-ins.
        self.assertEqual(self.rows(), [
            ("admin", "endpoint.disable", self.endpoint, "succeeded", "200", "", "127.0.0.1"),
            ("admin", "console.sign_in", "", "succeeded", "303", "", "127.0.0.1"),
            ("", "console.sign_in", "", "refused", "401", "wrong_token", "127.0.0.1"),
            ("admin", "endpoint.create", self.endpoint, "succeeded", "201", "", "127.0.0.1"),
        ])
        b.screenshot("audit", 520)

    def test_2_the_filter_form_shows_one_action(self):
        b = self.browser
        b.open("/console/audit")
        b.find("form#filters input[name=action]").send_keys("console.sign_in")
        b.find("#apply-filters").click()
        b.wait(lambda d: "action=console.sign_in" in d.current_url, "the filtered page")
        self.assertEqual([row[1:5] for row in self.rows()], [
            ("console.sign_in", "", "succeeded", "303"),
            ("console.sign_in", "", "refused", "401"),
        ])

    def test_3_an_unknown_action_is_refused_with_the_list(self):
        b = self.browser
        b.open("/console/audit?action=endpoint.frobnicate")
        self.assertTrue(b.text("#filter-error").startswith(
            "action must be one of endpoint.create, endpoint.update,"))
        self.assertEqual(self.rows(), [])

    def test_4_the_target_links_to_the_endpoint(self):
        b = self.browser
        b.open("/console/audit?action=endpoint.disable")
        b.find("table#audit td.target a").click()
        b.wait(lambda d: d.current_url.endswith(f"/console/endpoints/{self.endpoint}"),
               "the endpoint's page")

    def test_5_a_viewer_reads_it_with_the_admin_sign_out_and_its_own_sign_in(self):
        b = self.browser
        b.open("/console")
        b.sign_out()
        self.assertEqual(b.sign_in(VIEWER.split(":", 1)[1]), "/console")
        b.open("/console/audit")
        self.assertEqual(self.rows()[:2], [
            ("bob", "console.sign_in", "", "succeeded", "303", "", "127.0.0.1"),
            ("admin", "console.sign_out", "", "succeeded", "303", "", "127.0.0.1"),
        ])


if __name__ == "__main__":
    unittest.main()
