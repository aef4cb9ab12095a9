"""Real processes for the browser tests: webhooks-publisherd, merchant-receiver, orders-api.

Each server runs from the path CMake passes in the environment (WEBHOOKS_PUBLISHERD,
WEBHOOKS_MERCHANT_RECEIVER, WEBHOOKS_ORDERS_API), on 127.0.0.1 port 0 (or a given port), with
a SQLite file in a temporary directory, stdout and stderr in files there. Like
webhooks::launcher::ChildProcess (tools/launcher): its own process group, killed with the test
process (PR_SET_PDEATHSIG), and `wait_listening` reads the port from its first stdout line,
"listening on HOST:PORT", within 15 s.
"""

import base64
import ctypes
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

LISTENING = re.compile(rb"listening on ([0-9.]+):([0-9]+)")
_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def executable(variable):
    """The path in environment variable `variable` (set by tests/browser/CMakeLists.txt)."""
    path = os.environ.get(variable)
    if not path or not os.access(path, os.X_OK):
        raise RuntimeError(f"{variable} must name an executable (run through ctest), got {path!r}")
    return path


def free_port():
    """A port nothing listens on now (bound to 127.0.0.1:0, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_secret():
    """A signing secret as DESIGN.md writes it: whsec_ + base64 of 24 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


class WorkDir:
    """A temporary directory, removed by close() unless WEBHOOKS_KEEP_WORK is set."""

    def __init__(self, prefix):
        self.path = tempfile.mkdtemp(prefix=f"webhooks-browser-{prefix}-")

    def file(self, name):
        return os.path.join(self.path, name)

    def close(self):
        if os.environ.get("WEBHOOKS_KEEP_WORK"):
            print(f"kept {self.path}")
        else:
            shutil.rmtree(self.path, ignore_errors=True)


class Server:
    """One server process; `port` once wait_listening() has returned."""

    _count = 0

    def __init__(self, name, argv, workdir, env=None):
        Server._count += 1
        self.name = name
        stem = workdir.file(f"{name}.{Server._count}")
        self.out_path, self.err_path = stem + ".out", stem + ".err"
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         env={**os.environ, **(env or {})},
                                         start_new_session=True, preexec_fn=_die_with_parent)
        self.port = None

    def wait_listening(self, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.out_path, "rb") as f:
                match = LISTENING.search(f.read())
            if match:
                self.port = int(match.group(2))
                return self.port
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)  # polling the output file, bounded by the deadline
        self.kill()
        raise RuntimeError(f"{self.name} did not print 'listening on' (exit {self.proc.returncode})"
                           f"; stderr: {self.stderr()[-2000:]}")

    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace")

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=10)


def start(name, argv, workdir, env=None):
    """Starts a server and waits for its port; kills it if it does not come up."""
    server = Server(name, argv, workdir, env)
    server.wait_listening()
    return server


class Http:
    """JSON over HTTP to one server: call() returns (status, parsed body or text)."""

    def __init__(self, base, token):
        self.base, self.token = base, token

    def call(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=15) as response:
                return response.status, _parse(response.read())
        except urllib.error.HTTPError as e:
            return e.code, _parse(e.read())

    def expect(self, status, method, path, body=None, headers=None):
        got, answer = self.call(method, path, body, headers)
        if got != status:
            raise AssertionError(f"{method} {path}: expected {status}, got {got}: {answer}")
        return answer


def _parse(raw):
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")
