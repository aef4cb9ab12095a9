"""Endpoints on the publisher's console: one the daemon disabled after failing for --disable-after
(its receiver is not running), re-enabled from its page; replay-missing from its page queues the
event accepted while it was disabled; rotating a secret shows it once; a test event is delivered."""

import base64
import unittest

from console import AdminConsoleCase
from stacks import Publisher, eventually, free_port, new_secret

HEALTHY, DOWN = "m_healthy", "m_down"


class EndpointsConsole(AdminConsoleCase):
    @classmethod
    def set_up_servers(cls, work):
        cls.publisher = p = Publisher(work)
        cls.addClassCleanup(p.close)
        secret = new_secret()
        cls.healthy = p.add_endpoint(HEALTHY, p.start_receiver(secret).port, secret)
        cls.down_port, cls.down_secret = free_port(), new_secret()  # nothing listens there yet
        cls.down = p.add_endpoint(DOWN, cls.down_port, cls.down_secret)
        return p.base

    def row(self, endpoint_id):
        return f"table#endpoints tr[data-endpoint-id='{endpoint_id}']"

    def test_1_an_endpoint_failing_past_disable_after_is_shown_disabled(self):
        p, b = self.publisher, self.browser
        cls = type(self)
        cls.first = p.ingest(DOWN, "order.created", {"order_id": "ord_down_1"}, tasks=1)
        eventually(lambda: not p.endpoint(self.down)["enabled"], "the daemon to disable it")
        cls.missed = p.ingest(DOWN, "order.updated", {"order_id": "ord_down_1"}, tasks=0)
        b.open("/console/endpoints")
        down = self.row(self.down)
        self.assertEqual(b.cell(down, "state"), "disabled")
        self.assertEqual(b.cell(down, "reason"), "failing continuously")
        self.assertEqual(b.cell(down, "merchant"), DOWN)
        self.assertEqual(b.cell(down, "url"), f"http://127.0.0.1:{self.down_port}/webhooks")
        self.assertEqual(b.cell(self.row(self.healthy), "state"), "enabled")
        self.assertEqual(b.cell(self.row(self.healthy), "reason"), "")
        b.screenshot("endpoints")
        b.open("/console")

        def attention(page):
            return [li.get_attribute("data-endpoint-id")
                    for li in page.find_all("ul#attention li[data-endpoint-id]")]
        b.wait_reloading(lambda page: attention(page) == [self.down], "the recount")
        self.assertEqual(attention(b), [self.down])

    def test_2_enabling_it_from_its_page_delivers_its_waiting_task(self):
        p, b = self.publisher, self.browser
        p.start_receiver(self.down_secret, port=self.down_port)
        b.open("/console/endpoints")
        b.find(f"{self.row(self.down)} a").click()
        b.wait(lambda d: b.path() == f"/console/endpoints/{self.down}", "the endpoint page")
        self.assertEqual(b.text("#endpoint-state"), "disabled")
        self.assertEqual(b.text("#disabled-reason"), "failing continuously")
        b.screenshot("endpoint")
        self.assertEqual(b.act("enable"), "enable: done (200)")
        self.assertEqual(b.text("#endpoint-state"), "enabled")
        self.assertEqual(b.text("#disabled-reason"), "")
        self.assertTrue(p.endpoint(self.down)["enabled"])
        p.wait_task_state(self.first, self.down, "succeeded")

    def test_3_replay_missing_queues_the_event_accepted_while_disabled(self):
        p, b = self.publisher, self.browser
        self.assertIsNone(p.task(self.missed, self.down))
        created = p.api.expect(200, "GET", f"/v1/events/{self.missed}")["created_at"]
        b.open(f"/console/endpoints/{self.down}")
        b.set_value("input#since", created[:19])  # 2026-12-02T13:45:12, read as UTC
        self.assertEqual(b.act("replay-missing"), "replay-missing: done (202) tasks=1")
        task = p.wait_task_state(self.missed, self.down, "succeeded")
        self.assertEqual(task["attempts"], 1)
        first = p.api.expect(200, "GET", f"/v1/events/{self.first}")["tasks"]
        self.assertEqual([t["endpoint_id"] for t in first], [self.down])  # not queued twice
        b.open(f"/console/events/{self.missed}")
        row = f"table#tasks tr[data-task-id='{task['id']}']"
        self.assertEqual(b.cell(row, "endpoint"), self.down)
        self.assertEqual(b.cell(row, "state"), "succeeded")
        self.assertEqual(len(b.find_all("table#tasks tr[data-task-id]")), 1)

    def test_4_rotate_shows_the_new_secret_once_and_send_test_is_delivered(self):
        p, b = self.publisher, self.browser
        b.open(f"/console/endpoints/{self.healthy}")
        self.assertEqual(b.act("rotate-secret"), "rotate-secret: done (200)")
        secret = b.text("#new-secret")
        self.assertTrue(secret.startswith("whsec_"), secret)
        self.assertEqual(len(base64.b64decode(secret.removeprefix("whsec_"))), 32)
        self.assertEqual(len(p.endpoint(self.healthy)["secrets"]), 2)  # the old one in its grace
        b.open(f"/console/endpoints/{self.healthy}")
        self.assertEqual(b.text("#new-secret"), "")
        result = b.act("send-test")
        prefix = "send-test: done (202) tasks=1 event_id="
        self.assertTrue(result.startswith(prefix), result)
        event_id = result.removeprefix(prefix)
        p.wait_task_state(event_id, self.healthy, "succeeded")
        b.open(f"/console/events/{event_id}")
        self.assertEqual(b.text("#event-type"), "webhooks.test")
        self.assertEqual(b.text("#event-merchant"), HEALTHY)


if __name__ == "__main__":
    unittest.main()
