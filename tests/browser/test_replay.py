"""The walkthrough of docs/console.md, "Find a failed delivery and replay it", step by step: an
endpoint answering 500 exhausts a short retry schedule (3 attempts, 100 ms apart; --disable-after
10 min, so it stays enabled) and the event's task is dead; the overview counts it and lists the
endpoint as failing; the events page filtered by state `dead` shows that event and not the one
delivered before; its page shows the three failed attempts; once the endpoint answers 200 again,
*Replay* on that page delivers it with a manual attempt and the task succeeds. One screenshot a
step (replay-1-overview … replay-4-replayed), which `make screenshots` copies to docs/console/."""

import json
import unittest
from urllib.parse import urlsplit

from console import AdminConsoleCase
from flaky_endpoint import FAILED, start_flaky_endpoint

MERCHANT = "m_shop"
DELIVERED = {"order_id": "ord_1001", "amount": 1250, "currency": "EUR"}
FAILED_ORDER = {"order_id": "ord_1002", "amount": 990, "currency": "EUR"}
# Each screenshot is cut below what its step shows (px), to keep the pictures small.
SHOT_HEIGHT = {"overview": 580, "events": 230, "event": 820}


class ReplayWalkthrough(AdminConsoleCase):
    @classmethod
    def set_up_servers(cls, work):
        p = start_flaky_endpoint(cls, work, MERCHANT, 200)
        # One event delivered, then the endpoint breaks and the next one's retries run out.
        cls.delivered = p.ingest(MERCHANT, "order.created", DELIVERED, tasks=1)
        p.wait_task_state(cls.delivered, cls.endpoint, "succeeded")
        cls.receiver.answer_with(500)
        cls.failed = p.ingest(MERCHANT, "order.paid", FAILED_ORDER, tasks=1)
        cls.task = p.wait_task_state(cls.failed, cls.endpoint, "dead")
        return p.base

    def task_row(self):
        return f"table#tasks tr[data-task-id='{self.task['id']}']"

    def test_0_the_setup_left_one_dead_task_after_three_500s(self):
        self.assertEqual(self.task["attempts"], 3)
        self.assertEqual(self.receiver.statuses(self.delivered), [200])
        self.assertEqual(self.receiver.statuses(self.failed), [500, 500, 500])
        self.assertTrue(self.publisher.endpoint(self.endpoint)["enabled"])

    def queue_counts(self):
        return {state: self.browser.cell(f"table#queue-depth tr[data-state={state}]", "count")
                for state in ["pending", "delivering", "succeeded", "dead"]}

    def open_overview_counting(self, succeeded, dead):
        """Opens the overview and reloads it until the queue depth is 0 pending, 0 delivering,
        `succeeded` and `dead` (the recount runs in the background); asserts it."""
        self.browser.open("/console")
        expected = {"pending": "0", "delivering": "0", "succeeded": succeeded, "dead": dead}
        self.browser.wait_reloading(lambda page: self.queue_counts() == expected, "the recount")
        self.assertEqual(self.queue_counts(), expected)

    def test_1_the_overview_counts_a_dead_task_and_lists_the_failing_endpoint(self):
        b = self.browser
        self.open_overview_counting(succeeded="1", dead="1")
        [item] = b.find_all("ul#attention li[data-endpoint-id]")
        self.assertEqual(item.get_attribute("data-endpoint-id"), self.endpoint)
        self.assertRegex(item.text,
                         rf"^{self.endpoint} \({MERCHANT}\): failing for [0-9]+s$")
        b.screenshot("replay-1-overview", SHOT_HEIGHT["overview"])

    def test_2_the_events_filtered_by_state_dead_show_only_the_failed_event(self):
        b = self.browser
        b.open("/console/events")
        self.assertEqual(len(b.find_all("table#events tr[data-event-id]")), 2)
        b.find("form#filters input[name=state]").send_keys("dead")
        b.find("#apply-filters").click()
        b.wait(lambda d: "state=dead" in urlsplit(d.current_url).query.split("&"),
               "the events filtered by state")
        rows = b.find_all("table#events tr[data-event-id]")
        self.assertEqual([r.get_attribute("data-event-id") for r in rows], [self.failed])
        row = f"table#events tr[data-event-id='{self.failed}']"
        self.assertEqual(b.cell(row, "type"), "order.paid")
        self.assertEqual(b.cell(row, "merchant"), MERCHANT)
        self.assertEqual(b.cell(row, "states"), "dead: 1")
        b.screenshot("replay-2-dead-events", SHOT_HEIGHT["events"])
        b.find(f"{row} a").click()
        b.wait(lambda d: b.path() == f"/console/events/{self.failed}", "the event page")

    def test_3_the_event_page_shows_the_three_failed_attempts(self):
        b = self.browser
        self.assertEqual(b.path(), f"/console/events/{self.failed}")
        self.assertEqual(b.text("#event-type"), "order.paid")
        self.assertEqual(json.loads(b.text("pre#payload")), FAILED_ORDER)
        row = self.task_row()
        self.assertEqual(b.cell(row, "endpoint"), self.endpoint)
        self.assertEqual(b.cell(row, "state"), "dead")
        self.assertEqual(b.cell(row, "attempts"), "3")
        self.assertEqual(b.cell(row, "last-status"), "500")
        self.assertEqual(self.attempt_cells(), FAILED)
        b.screenshot("replay-3-failed-event", SHOT_HEIGHT["event"])

    def test_4_once_the_endpoint_is_fixed_replay_delivers_it(self):
        b = self.browser
        self.receiver.answer_with(200)
        self.assertEqual(b.act("replay"), f"replay: done (202) tasks=1 event_id={self.failed}")
        row = self.task_row()
        b.wait_reloading(lambda page: page.cell(row, "state") == "succeeded",
                         "the replayed task to succeed")
        self.assertEqual(b.cell(row, "attempts"), "1")
        self.assertEqual(b.cell(row, "last-status"), "200")
        self.assertEqual(self.attempt_cells(), FAILED + [("1", "manual", "200", "ok")])
        b.screenshot("replay-4-replayed", SHOT_HEIGHT["event"])
        self.assertEqual(self.receiver.statuses(self.failed), [500, 500, 500, 200])
        [task] = self.publisher.api.expect(200, "GET", f"/v1/events/{self.failed}")["tasks"]
        self.assertEqual((task["id"], task["state"], task["attempts"]),
                         (self.task["id"], "succeeded", 1))

    def test_5_the_overview_has_no_dead_task_left(self):
        b = self.browser
        self.open_overview_counting(succeeded="2", dead="0")
        self.assertEqual(b.find_all("ul#attention li[data-endpoint-id]"), [])


if __name__ == "__main__":
    unittest.main()
