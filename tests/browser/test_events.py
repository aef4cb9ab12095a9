"""Events on the publisher's console: delivered by the real daemon to a real merchant-receiver,
listed with their attempts, replayed from the page; the overview's counts; escaping."""

import json
import unittest
from urllib.parse import urlencode

from console import AdminConsoleCase
from stacks import Publisher, new_secret

MERCHANT = "m_shop"
ORDER = {"order_id": "ord_1", "amount": 1250, "currency": "EUR", "note": "first"}


class EventsConsole(AdminConsoleCase):
    @classmethod
    def set_up_servers(cls, work):
        cls.publisher = Publisher(work)
        cls.addClassCleanup(cls.publisher.close)
        secret = new_secret()
        receiver = cls.publisher.start_receiver(secret)
        cls.endpoint = cls.publisher.add_endpoint(MERCHANT, receiver.port, secret)
        return cls.publisher.base

    def deliver(self, event_type, data):
        """Ingests an event and waits until the daemon delivered it; (event id, task)."""
        event_id = self.publisher.ingest(MERCHANT, event_type, data, tasks=1)
        return event_id, self.publisher.wait_task_state(event_id, self.endpoint, "succeeded")

    def attempts(self, event_id):
        return self.publisher.api.expect(200, "GET", f"/v1/events/{event_id}/attempts")["attempts"]

    def attempt_rows(self):
        return self.browser.find_all("table#attempts tr[data-delivery-id]")

    def test_1_a_delivered_event_is_listed_with_its_attempt(self):
        event_id, task = self.deliver("order.created", ORDER)
        b = self.browser
        b.open("/console/events")
        row = f"table#events tr[data-event-id='{event_id}']"
        self.assertEqual(b.cell(row, "type"), "order.created")
        self.assertEqual(b.cell(row, "merchant"), MERCHANT)
        self.assertEqual(b.cell(row, "states"), "succeeded: 1")
        b.screenshot("events")
        b.find(f"{row} a").click()
        b.wait(lambda d: self.browser.path() == f"/console/events/{event_id}", "the event page")
        self.assertEqual(b.text("#event-type"), "order.created")
        self.assertEqual(json.loads(b.text("pre#payload")), ORDER)
        task_row = f"table#tasks tr[data-task-id='{task['id']}']"
        self.assertEqual(b.cell(task_row, "endpoint"), self.endpoint)
        self.assertEqual(b.cell(task_row, "state"), "succeeded")
        self.assertEqual(b.cell(task_row, "attempts"), "1")
        [attempt] = self.attempts(event_id)
        rows = self.attempt_rows()
        self.assertEqual([r.get_attribute("data-delivery-id") for r in rows],
                         [attempt["delivery_id"]])
        self.assertEqual(b.cell("table#attempts tr[data-delivery-id]", "trigger"), "scheduled")
        self.assertEqual(b.cell("table#attempts tr[data-delivery-id]", "status"), "200")
        b.screenshot("event")

    def test_2_replay_from_the_event_page_adds_a_manual_attempt(self):
        event_id, _ = self.deliver("order.paid", {"order_id": "ord_2", "amount": 990})
        b = self.browser
        b.open(f"/console/events/{event_id}")
        self.assertEqual(len(self.attempt_rows()), 1)
        self.assertEqual(b.act("replay"), f"replay: done (202) tasks=1 event_id={event_id}")
        b.wait_reloading(lambda page: len(self.attempt_rows()) == 2, "the replayed attempt")
        first, second = self.attempts(event_id)
        rows = self.attempt_rows()
        self.assertEqual([r.get_attribute("data-delivery-id") for r in rows],
                         [first["delivery_id"], second["delivery_id"]])
        self.assertEqual(second["trigger"], "manual")
        self.assertEqual(rows[1].find_element("css selector", "td.trigger").text, "manual")
        self.assertEqual(rows[0].find_element("css selector", "td.trigger").text, "scheduled")
        self.assertEqual(rows[1].find_element("css selector", "td.status").text, "200")

    def test_3_the_overview_counts_the_deliveries(self):
        b = self.browser
        b.open("/console")
        b.wait_reloading(
            lambda page: page.cell("table#queue-depth tr[data-state=succeeded]", "count") == "2",
            "the recount")
        for state in ["pending", "delivering", "dead"]:
            self.assertEqual(b.cell(f"table#queue-depth tr[data-state={state}]", "count"), "0")
        self.assertEqual(b.text("#oldest-pending"), "none")
        self.assertEqual(b.find_all("ul#attention li[data-endpoint-id]"), [])
        b.find("svg#chart-deliveries")
        b.find("svg#chart-failures")
        b.screenshot("overview")

    def test_4_markup_in_the_type_and_payload_is_shown_as_text(self):
        hostile_type = "<script>alert(1)</script>\"'"
        data = {"note": "<script>alert(1)</script>", "quotes": "\"double\" 'single' </pre>",
                "image": "<img src=x onerror=alert(2)>"}
        event_id, _ = self.deliver(hostile_type, data)
        b = self.browser
        b.open("/console/events?" + urlencode({"type": hostile_type}))
        self.assert_no_injection()
        self.assertEqual(b.find("form#filters input[name=type]").get_attribute("value"),
                         hostile_type)
        rows = b.find_all("table#events tr[data-event-id]")
        self.assertEqual([r.get_attribute("data-event-id") for r in rows], [event_id])
        self.assertEqual(b.cell("table#events tr[data-event-id]", "type"), hostile_type)
        b.open(f"/console/events/{event_id}")
        self.assert_no_injection()
        self.assertEqual(b.text("#event-type"), hostile_type)
        self.assertEqual(json.loads(b.text("pre#payload")), data)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", b.driver.page_source)

    def assert_no_injection(self):
        """No dialog opened, and no element came from the data: every script is the page's own
        (a src), no <img>, nothing inside #event-type, the payload or the events' type cells."""
        b = self.browser
        self.assertIsNone(b.alert_text())
        for script in b.find_all("script"):
            self.assertNotIn("alert(", script.get_attribute("textContent"))
        self.assertEqual(b.find_all("img"), [])
        self.assertEqual(b.find_all("#event-type *, pre#payload *, td.type *"), [])


if __name__ == "__main__":
    unittest.main()
