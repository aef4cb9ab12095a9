"""Headless Chromium driven by Debian's chromium-driver, and the base class of the browser tests.

One browser per test class (ConsoleCase.browser); everything a test reads from a page goes
through the ids and attributes of the console contract (docs/console.md).
"""

import base64
import os
import signal
import unittest
import urllib.parse

from selenium import webdriver
from selenium.common.exceptions import JavascriptException, NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from harness import WorkDir, _die_with_parent

# Headless as root in CI, no GPU, no /dev/shm, and nothing that reaches out to the network: the
# background services' connections are refused on a closed network and slow the start down.
CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-extensions",
    "--window-size=1280,900", "--lang=en-US",
]
WAIT_S = 15


def screenshot_dir():
    """WEBHOOKS_SCREENSHOT_DIR (CMake: BUILD/console-screenshots), else ./console-screenshots."""
    path = os.environ.get("WEBHOOKS_SCREENSHOT_DIR") or os.path.join(os.getcwd(),
                                                                      "console-screenshots")
    os.makedirs(path, exist_ok=True)
    return path


class Browser:
    """A Chromium session on one server's console at `base` (http://127.0.0.1:PORT)."""

    def __init__(self, workdir, base):
        self.base = base
        chromium = os.environ.get("WEBHOOKS_CHROMIUM", "/usr/bin/chromium")
        chromedriver = os.environ.get("WEBHOOKS_CHROMEDRIVER", "/usr/bin/chromedriver")
        for path in [chromium, chromedriver]:
            if not os.access(path, os.X_OK):
                raise RuntimeError(f"{path} is missing: run scripts/install-deps (Debian's "
                                   "chromium and chromium-driver)")
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in CHROMIUM_FLAGS + ["--user-data-dir=" + workdir.file("chromium-profile")]:
            options.add_argument(flag)
        self.service = Service(
            chromedriver,
            log_path=workdir.file("chromedriver.log"), env={**os.environ, "TZ": "UTC"},
            popen_kw={"start_new_session": True, "preexec_fn": _die_with_parent})
        self.driver = webdriver.Chrome(service=self.service, options=options)

    def quit(self):
        try:
            self.driver.quit()
        finally:  # chromedriver and the browser it started share its process group
            process = getattr(self.service, "process", None)
            if process is not None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    # Navigation and reading.
    def open(self, path):
        self.driver.get(self.base + path)

    def path(self):
        return urllib.parse.urlsplit(self.driver.current_url).path

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def text(self, css):
        return self.find(css).text

    def cell(self, row_css, cell_class):
        return self.find(f"{row_css} td.{cell_class}").text

    def wait(self, condition, what, timeout=WAIT_S):
        """condition(driver)'s first truthy value, polled every 100 ms."""
        return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(
            condition, f"waiting for {what}")

    def wait_for(self, css, timeout=WAIT_S):
        return self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, css), css, timeout)[0]

    def wait_reloading(self, condition, what, timeout=WAIT_S):
        """Reloads the page until condition(self) is truthy (server-rendered data that changes)."""
        def probe(driver):
            driver.refresh()
            return condition(self)
        return WebDriverWait(self.driver, timeout, poll_frequency=0.25).until(
            probe, f"waiting for {what} (reloading)")

    def alert_text(self):
        """The text of an open alert/confirm dialog, or None."""
        try:
            return self.driver.switch_to.alert.text
        except NoAlertPresentException:
            return None

    # Forms.
    def sign_in(self, token):
        """Submits the login form; returns the path the browser landed on."""
        self.open("/console/login")
        field = self.find("#token")
        field.clear()
        field.send_keys(token)
        before = self.driver.current_url
        self.find("#sign-in").click()
        self.wait(lambda d: d.current_url != before or d.find_elements(By.ID, "login-error"),
                  "the answer to the login form")
        return self.path()

    def sign_out(self):
        """Presses #sign-out and waits for the login form."""
        self.find("#sign-out").click()
        self.wait(lambda d: self.path() == "/console/login", "the login form")

    def act(self, action):
        """Presses button[data-action=ACTION] and waits for the answer in #action-result, which
        the page's script writes after the API call (and keeps across its reload); its text."""
        self.find(f"button[data-action='{action}']").click()

        def result(driver):
            text = driver.execute_script(
                "const e = document.getElementById('action-result'); return e && e.textContent;")
            done = text and text.startswith(action + ": ") and not text.endswith("...")
            return text if done else None
        return WebDriverWait(self.driver, WAIT_S, poll_frequency=0.1,
                             ignored_exceptions=[JavascriptException]).until(
            result, f"the result of {action}")

    def set_value(self, css, value):
        """Sets an input's value as a user would (fires input and change)."""
        self.driver.execute_script(
            "const e = arguments[0]; e.value = arguments[1];"
            "e.dispatchEvent(new Event('input', {bubbles: true}));"
            "e.dispatchEvent(new Event('change', {bubbles: true}));", self.find(css), value)

    def screenshot(self, name, max_height=2400):
        """Saves the whole page, 1280 px wide and up to `max_height` px tall, as NAME.png in
        screenshot_dir() (Chromium's own capture beyond the viewport, through DevTools)."""
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": 1280, "height": min(int(height), max_height),
                     "scale": 1}})
        with open(os.path.join(screenshot_dir(), name + ".png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))


class ConsoleCase(unittest.TestCase):
    """A test class with a work directory and the cleanups of everything it starts.

    Subclasses start their servers in set_up_servers(work) and return the console's base URL;
    the class's browser then opens it. Tests within a class run in name order and share state.
    """

    browser = None

    @classmethod
    def set_up_servers(cls, work):
        raise NotImplementedError

    @classmethod
    def setUpClass(cls):
        cls.work = WorkDir(cls.__name__)
        cls.addClassCleanup(cls.work.close)
        base = cls.set_up_servers(cls.work)
        cls.browser = Browser(cls.work, base)
        cls.addClassCleanup(cls.browser.quit)


class AdminConsoleCase(ConsoleCase):
    """A ConsoleCase (with cls.publisher) whose browser signs in with the admin token first."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.browser.sign_in(cls.publisher.token)

    def attempt_cells(self):
        """(number, trigger, status, response) of every row of the event page's attempts."""
        return [tuple(row.find_element("css selector", f"td.{name}").text
                      for name in ["number", "trigger", "status", "response"])
                for row in self.browser.find_all("table#attempts tr[data-delivery-id]")]
