"""README.md's "Your first webhook, in five minutes", run as a new user runs it.

Each fenced block after a `<!-- first-webhook: NAME -->` marker is run line by line with bash, as
written, except: `build/bin/` is the build's bin directory, the ports 8780 and 8784 are free ones
(and WEBHOOKS_PUBLISHER_URL names the publisher's, the CLI's default being 8780),
the `/tmp/first-webhook*` databases are in a temporary directory, and `EVENT_ID` is the event id that the last
`publish` printed. The publisher and the listener run in the background (the README's terminals 1
and 2); Ctrl-C is SIGINT. Every wait is bounded (15 s) and polls, never sleeps for a fixed time.
"""
import os
import re
import shlex
import signal
import socket
import subprocess
import tempfile
import time
import unittest

BIN = os.environ["WEBHOOKS_BIN_DIR"]
README = os.environ["WEBHOOKS_README"]
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def blocks():
    """{name: [command, ...]} of the README's first-webhook blocks, continuation lines joined."""
    text = open(README, encoding="utf-8").read()
    found = {}
    for name, body in re.findall(r"<!-- first-webhook: (\w+) -->\n```sh\n(.*?)```", text, re.S):
        found[name] = [line for line in body.replace("\\\n", " ").splitlines() if line.strip()]
    return found


def until(check, what, limit=15.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("no " + what + " within %.0f s" % limit)


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


class FirstWebhook(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="first-webhook-")
        self.publisher_port, self.listener_port = free_port(), free_port()
        self.env = dict(os.environ)
        self.env["WEBHOOKS_PUBLISHER_URL"] = "http://127.0.0.1:%d" % self.publisher_port
        self.event_id = None
        self.background = []
        self.logs = []
        self.blocks = blocks()

    def tearDown(self):
        for process in self.background:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for log in self.logs:
            log.close()

    def as_run(self, command):
        """The README's command with this test's paths, ports and event id."""
        command = command.replace("build/bin/", BIN + "/")
        command = command.replace("127.0.0.1:8780", "127.0.0.1:%d" % self.publisher_port)
        command = command.replace("127.0.0.1:8784", "127.0.0.1:%d" % self.listener_port)
        command = command.replace("/tmp/first-webhook", self.dir + "/first-webhook")
        if self.event_id:
            command = command.replace("EVENT_ID", self.event_id)
        return command

    def export(self, command):
        """Applies `export NAME=VALUE` to the environment of the following commands."""
        name, value = command[len("export "):].split("=", 1)
        self.env[name] = shlex.split(value)[0]

    def run_block(self, name):
        """Runs each command of a foreground block; returns their outputs (stdout) in order."""
        outputs = []
        for command in self.blocks[name]:
            if command.startswith("export "):
                self.export(command)
                continue
            done = subprocess.run(["bash", "-c", self.as_run(command)], env=self.env,
                                  capture_output=True, text=True, timeout=30)
            self.assertEqual(done.returncode, 0, command + "\n" + done.stderr)
            if " publish " in command:
                self.event_id = re.search(r"^event_id: +(\S+)$", done.stdout, re.M).group(1)
            outputs.append(done.stdout)
        return outputs

    def start_block(self, name, port, log):
        """Starts the last command of a background block (its exports applied); waits for port."""
        *exports, command = self.blocks[name]
        for line in exports:
            self.export(line)
        out = open(os.path.join(self.dir, log), "a")
        self.logs.append(out)
        process = subprocess.Popen(["bash", "-c", "exec " + self.as_run(command)], env=self.env,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.background.append(process)
        until(lambda: listening(port), name + " listening")
        return process

    def listener_lines(self):
        with open(os.path.join(self.dir, "listener.log")) as f:
            return f.read().splitlines()

    def test_first_webhook(self):
        self.assertEqual(sorted(self.blocks), ["fail", "listener", "publish", "publisher", "replay"])
        self.start_block("publisher", self.publisher_port, "publisher.log")
        listener = self.start_block("listener", self.listener_port, "listener.log")

        created, published = self.run_block("publish")
        self.assertIn("\nsecret:             " + SECRET + "\n", created)
        self.assertIn("\nmerchant_id:        shop_1\n", created)
        first = self.event_id
        self.assertRegex(published, r"^event_id: +%s\ntasks: +1\nidempotency_key: +\S+\n"
                                    r"replayed: +false\n$" % first)
        until(lambda: any(line.startswith(first + "  order.created  ") and line.endswith("  new")
                          for line in self.listener_lines()), "delivery of the first event")

        # Ctrl-C in terminal 2.
        listener.send_signal(signal.SIGINT)
        self.assertEqual(listener.wait(timeout=15), 0)
        published, pending, attempts = self.run_block("fail")
        second = self.event_id
        self.assertNotEqual(second, first)
        self.assertIn("\n" + second + "  shop_1       order.paid  ", pending)
        self.assertNotIn(first, pending)
        rows = attempts.splitlines()
        self.assertTrue(rows[0].startswith("delivery_id "), attempts)
        self.assertGreaterEqual(len(rows), 2, attempts)
        for row in rows[1:]:  # each attempt: scheduled, no HTTP status, no connection
            self.assertRegex(row, r"  scheduled  +0  .*  connect: Failed to connect to 127\.0\.0\.1 "
                                  r"port %d after \d+ ms: Couldn't connect to server *$"
                             % self.listener_port, attempts)

        # Step 5: the listener again, then the replay; the second event arrives new once.
        self.start_block("listener", self.listener_port, "listener.log")
        (replayed,) = self.run_block("replay")
        self.assertRegex(replayed, r"^event_id: +%s\n" % second)
        until(lambda: any(line.startswith(second + "  order.paid  ") and line.endswith("  new")
                          for line in self.listener_lines()), "delivery of the replayed event")
        news = [l for l in self.listener_lines() if l.endswith("  new")]
        self.assertEqual([l.split("  ")[0] for l in news], [first, second])


if __name__ == "__main__":
    unittest.main()
