"""Recover on the publisher's console: an endpoint answering 500 exhausts a short retry schedule
(3 attempts, 100 ms apart) long before --disable-after (10 min), so its tasks die while it stays
enabled; once it answers 200, "Recover failed since" on its page re-queues the dead task of the
event created since then (and not the older one), and the event's page shows the new manual
attempt answered 200 and the task succeeded."""

import unittest

from console import AdminConsoleCase
from flaky_endpoint import FAILED, start_flaky_endpoint

MERCHANT = "m_flaky"


class RecoverConsole(AdminConsoleCase):
    @classmethod
    def set_up_servers(cls, work):
        p = start_flaky_endpoint(cls, work, MERCHANT, 500)
        return p.base

    def task_row(self, task_id):
        return f"table#tasks tr[data-task-id='{task_id}']"

    def ingest_until_dead(self, order_id):
        p = self.publisher
        event_id = p.ingest(MERCHANT, "order.created", {"order_id": order_id}, tasks=1)
        task = p.wait_task_state(event_id, self.endpoint, "dead")
        self.assertEqual(task["attempts"], 3)
        self.assertEqual(self.receiver.statuses(event_id), [500, 500, 500])
        return event_id, task

    def test_1_a_task_whose_retries_ran_out_is_dead_and_its_endpoint_enabled(self):
        p, b = self.publisher, self.browser
        cls = type(self)
        cls.older, _ = self.ingest_until_dead("ord_old")
        cls.event, cls.task = self.ingest_until_dead("ord_new")
        self.assertTrue(p.endpoint(self.endpoint)["enabled"])
        b.open(f"/console/endpoints/{self.endpoint}")
        self.assertEqual(b.text("#endpoint-state"), "enabled")
        self.assertEqual(b.text("#disabled-reason"), "")
        b.open(f"/console/events/{self.event}")
        row = self.task_row(self.task["id"])
        self.assertEqual(b.cell(row, "state"), "dead")
        self.assertEqual(b.cell(row, "attempts"), "3")
        self.assertEqual(b.cell(row, "last-status"), "500")
        self.assertEqual(self.attempt_cells(), FAILED)

    def test_2_recover_since_the_event_delivers_it_with_a_manual_attempt(self):
        p, b = self.publisher, self.browser
        self.receiver.answer_with(200)
        created = p.api.expect(200, "GET", f"/v1/events/{self.event}")["created_at"]
        b.open(f"/console/endpoints/{self.endpoint}")
        b.set_value("input#since", created[:23])  # 2026-12-02T13:45:12.345, read as UTC
        self.assertEqual(b.act("recover"), "recover: done (202) tasks=1")
        b.open(f"/console/events/{self.event}")
        row = self.task_row(self.task["id"])
        b.wait_reloading(lambda page: page.cell(row, "state") == "succeeded",
                         "the recovered task to succeed")
        self.assertEqual(b.cell(row, "attempts"), "1")
        self.assertEqual(b.cell(row, "last-status"), "200")
        self.assertEqual(self.attempt_cells(), FAILED + [("1", "manual", "200", "ok")])
        self.assertEqual(self.receiver.statuses(self.event), [500, 500, 500, 200])
        [task] = p.api.expect(200, "GET", f"/v1/events/{self.event}")["tasks"]
        self.assertEqual((task["id"], task["state"], task["attempts"]),
                         (self.task["id"], "succeeded", 1))

    def test_3_the_event_created_before_since_stays_dead(self):
        task = self.publisher.task(self.older, self.endpoint)
        self.assertEqual((task["state"], task["attempts"]), ("dead", 3))
        self.assertEqual(self.receiver.statuses(self.older), [500, 500, 500])
        self.browser.open(f"/console/events/{self.older}")
        self.assertEqual(self.browser.cell(self.task_row(task["id"]), "state"), "dead")


if __name__ == "__main__":
    unittest.main()
