"""Signing in to the publisher's console with the admin token (docs/console.md, "Sessions"), a
cookie kept from before sign-out (refused: revoked on the server), and a viewer's read-only
console (no action buttons)."""

import secrets
import unittest

from console import ConsoleCase
from stacks import Publisher, new_secret

CONSOLE_PAGES = ["/console", "/console/endpoints", "/console/events", "/console/events/nope"]


class PublisherSignIn(ConsoleCase):
    @classmethod
    def set_up_servers(cls, work):
        cls.publisher = Publisher(work)
        cls.addClassCleanup(cls.publisher.close)
        return cls.publisher.base

    def session_cookie(self):
        return self.browser.driver.get_cookie("webhooks_console")

    def assert_login_required(self, page):
        """Opening `page` lands on the login form."""
        self.browser.open(page)
        self.assertEqual(self.browser.path(), "/console/login", page)

    def test_1_every_page_without_a_session_goes_to_the_login_form(self):
        b = self.browser
        for page in CONSOLE_PAGES:
            self.assert_login_required(page)
            self.assertEqual(b.find("#login-form").get_attribute("action"),
                             b.base + "/console/login")
            self.assertEqual(b.find("#token").get_attribute("type"), "password")
            self.assertEqual(b.find_all("#nav-overview"), [], page)
        b.screenshot("login")

    def test_2_a_wrong_token_shows_the_error_and_no_session(self):
        b = self.browser
        self.assertEqual(b.sign_in(self.publisher.token + "x"), "/console/login")
        self.assertTrue(b.find("#login-error").is_displayed())
        self.assertIsNone(self.session_cookie())
        self.assert_login_required("/console")

    def test_3_the_admin_token_lands_on_the_overview(self):
        b = self.browser
        self.assertEqual(b.sign_in(self.publisher.token), "/console")
        self.assertEqual(b.find_all("#login-error"), [])
        b.find("svg#chart-deliveries")
        b.find("table#queue-depth")
        cookie = self.session_cookie()
        self.assertTrue(cookie["httpOnly"])
        self.assertEqual(cookie["sameSite"], "Strict")
        self.assertEqual(cookie["path"], "/")
        self.assertNotEqual(b.find("meta[name=csrf-token]").get_attribute("content"), "")
        b.find("#nav-events").click()
        b.wait(lambda d: self.browser.path() == "/console/events", "the events page")
        b.find("table#events")

    def test_4_sign_out_ends_the_session(self):
        b = self.browser
        b.open("/console")
        b.sign_out()
        self.assertIsNone(self.session_cookie())
        self.assert_login_required("/console/endpoints")

    def test_5_a_cookie_kept_from_before_sign_out_is_refused(self):
        b = self.browser
        self.assertEqual(b.sign_in(self.publisher.token), "/console")
        kept = self.session_cookie()["value"]
        b.sign_out()
        b.driver.add_cookie({"name": "webhooks_console", "value": kept, "path": "/"})
        self.assert_login_required("/console")


class PublisherViewer(ConsoleCase):
    VIEWER = "view_" + secrets.token_hex(16)

    @classmethod
    def set_up_servers(cls, work):
        cls.publisher = Publisher(work, flags=["--viewer-token", "ops:" + cls.VIEWER])
        cls.addClassCleanup(cls.publisher.close)
        cls.endpoint_id = cls.publisher.add_endpoint("m1", 9, new_secret())
        return cls.publisher.base

    def test_1_a_viewer_sees_the_endpoint_without_action_buttons(self):
        b = self.browser
        self.assertEqual(b.sign_in(self.VIEWER), "/console")
        b.open("/console/endpoints/" + self.endpoint_id)
        self.assertEqual(b.find("#endpoint-state").text, "enabled")
        self.assertEqual(b.find_all("button[data-action]"), [])


if __name__ == "__main__":
    unittest.main()
