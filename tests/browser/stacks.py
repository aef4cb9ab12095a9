"""The servers a browser test signs in to, with their admin/merchant API for setting up state.

Publisher: webhooks-publisherd with a fast retry schedule (10 x 200 ms), --disable-after 1s and a
50 ms poll, so retries, auto-disabling and recovery happen within a second or two (a test may pass
another schedule and --disable-after).
ScriptedReceiver: an HTTP server on 127.0.0.1 in the test process answering the status it is told
to (500, then 200), recording every request's webhook-id and the status it got.
Orders: orders-api with an API key, its payout partner on a port nothing listens on (a payout
fails: the record is `failed`).
"""

import http.server
import json
import secrets
import socket
import threading
import time

from harness import Http, executable, free_port, new_secret, start

RETRY_SCHEDULE = ",".join(["200ms"] * 10)
DISABLE_AFTER = "1s"


def eventually(probe, what, timeout=15.0):
    """probe()'s first truthy value, asked every 50 ms for at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)  # polling interval, bounded by the deadline


class Publisher:
    """webhooks-publisherd and the merchant receivers its endpoints point at."""

    def __init__(self, workdir, retry_schedule=RETRY_SCHEDULE, disable_after=DISABLE_AFTER,
                 flags=()):
        self.workdir = workdir
        self.token = "adm_" + secrets.token_hex(16)
        self.server = start("webhooks-publisherd", [
            executable("WEBHOOKS_PUBLISHERD"), "--listen", "127.0.0.1:0",
            "--db", workdir.file("publisher.db"), "--admin-token", self.token,
            "--allow-private-networks", "--retry-schedule", retry_schedule,
            "--disable-after", disable_after, "--poll-interval", "50ms",
            "--connect-timeout", "1s", "--timeout", "2s",
            # Once counting takes over 20 ms (always under ASan), the overview is a snapshot
            # recounted every --overview-refresh: tests reload the page until it shows a change.
            "--overview-refresh", "100ms", *flags], workdir)
        self.base = f"http://127.0.0.1:{self.server.port}"
        self.api = Http(self.base, self.token)
        self.receivers = []
        self._keys = 0

    def start_receiver(self, secret, port=0):
        """A merchant-receiver on `port` (0: a free one) verifying with `secret`."""
        receiver = start("merchant-receiver", [
            executable("WEBHOOKS_MERCHANT_RECEIVER"), "--listen", f"127.0.0.1:{port}",
            "--db", self.workdir.file(f"merchant-{len(self.receivers)}.db")], self.workdir,
            env={"WEBHOOKS_SECRET": secret})
        self.receivers.append(receiver)
        return receiver

    def add_endpoint(self, merchant_id, port, secret):
        """POST /v1/endpoints for every type, to the receiver at `port`; its id."""
        answer = self.api.expect(201, "POST", "/v1/endpoints", {
            "merchant_id": merchant_id, "url": f"http://127.0.0.1:{port}/webhooks",
            "event_types": [], "secret": secret})
        return answer["id"]

    def ingest(self, merchant_id, event_type, data, tasks):
        """POST /v1/events; asserts it fanned out to `tasks` endpoints; the event id."""
        self._keys += 1
        answer = self.api.expect(202, "POST", "/v1/events",
                                 {"merchant_id": merchant_id, "type": event_type, "data": data},
                                 {"Idempotency-Key": f"browser-{self._keys}"})
        if answer["tasks"] != tasks:
            raise AssertionError(f"expected {tasks} tasks, got {answer}")
        return answer["event_id"]

    def task(self, event_id, endpoint_id):
        """The event's task for the endpoint (GET /v1/events/{id}), or None."""
        event = self.api.expect(200, "GET", f"/v1/events/{event_id}")
        return next((t for t in event["tasks"] if t["endpoint_id"] == endpoint_id), None)

    def wait_task_state(self, event_id, endpoint_id, state):
        def probe():
            task = self.task(event_id, endpoint_id)
            return task if task and task["state"] == state else None
        return eventually(probe, f"task of {event_id} for {endpoint_id} to be {state}")

    def endpoint(self, endpoint_id):
        return self.api.expect(200, "GET", f"/v1/endpoints/{endpoint_id}")

    def close(self):
        for server in [self.server, *self.receivers]:
            server.kill()


class ScriptedReceiver:
    """A loopback HTTP server answering every POST with `status` (settable at any time) and the
    body `answer`; `requests` lists (webhook-id, status answered) in arrival order. It checks no
    signature: it stands for an endpoint that fails, then recovers."""

    def __init__(self, status, answer=b"receiver down"):
        self.status, self.answer, self.requests = status, answer, []
        self._lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._lock:
                    status = receiver.status
                    receiver.requests.append((self.headers.get("webhook-id"), status))
                body = receiver.answer if status >= 300 else b"ok"
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer_with(self, status):
        with self._lock:
            self.status = status

    def statuses(self, webhook_id):
        """The statuses answered to the requests carrying `webhook_id` (an event id)."""
        with self._lock:
            return [status for wid, status in self.requests if wid == webhook_id]

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


class Orders:
    """orders-api on workdir's orders.db with `flags` (its --api-key flags among them), its
    payout partner at `partner_port`, one try per partner call."""

    def __init__(self, workdir, partner_port, flags):
        self.server = start("orders-api", [
            executable("WEBHOOKS_ORDERS_API"), "--listen", "127.0.0.1:0",
            "--db", workdir.file("orders.db"), "--partner-url", f"http://127.0.0.1:{partner_port}",
            "--partner-attempts", "1", "--partner-timeout", "2s", *flags], workdir)
        self.base = f"http://127.0.0.1:{self.server.port}"

    def post(self, api_key, path, idempotency_key, body, status):
        """POST with the merchant's API key and an Idempotency-Key; asserts the status."""
        return Http(self.base, api_key).expect(status, "POST", path, body,
                                               {"Idempotency-Key": idempotency_key})

    def post_without_waiting(self, api_key, path, idempotency_key, body):
        """Sends the POST on a socket it returns open, without reading the answer."""
        data = json.dumps(body).encode()
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {api_key}\r\n"
                f"Idempotency-Key: {idempotency_key}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n").encode()
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=15)
        sock.sendall(head + data)
        return sock

    def close(self):
        self.server.kill()


__all__ = ["Publisher", "Orders", "ScriptedReceiver", "eventually", "free_port", "new_secret"]
