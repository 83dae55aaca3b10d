"""Test support: the real ratchet binary on loopback, a scripted provider,
and waiting for conditions with a deadline.

The binary is $RATCHET_BIN when that file exists; otherwise it is built once
per test process with `go build ./cmd/ratchet` from the repository root (into
$RATCHET_BIN when set, else a temporary directory).
"""

from __future__ import annotations

import atexit
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

SDK = Path(__file__).resolve().parent.parent
ROOT = SDK.parent.parent
sys.path.insert(0, str(SDK))

import ratchet  # noqa: E402

OWNER_KEY = "rk_python_sdk_owner_key_0123456789abcdef"
LISTEN_RE = re.compile(r"listening on (http://\S+)")

_bin_lock = threading.Lock()
_bin: str | None = None

T = TypeVar("T")


def binary() -> str:
    """The ratchet binary, built once when needed."""
    global _bin
    with _bin_lock:
        if _bin:
            return _bin
        env_bin = os.environ.get("RATCHET_BIN")
        if env_bin and os.path.isfile(env_bin) and os.access(env_bin, os.X_OK):
            _bin = env_bin
            return _bin
        if env_bin:
            out = os.path.abspath(env_bin)
            os.makedirs(os.path.dirname(out), exist_ok=True)
        else:
            d = tempfile.mkdtemp(prefix="ratchet-py-bin-")
            atexit.register(shutil.rmtree, d, True)
            out = os.path.join(d, "ratchet")
        if not shutil.which("go"):
            raise unittest.SkipTest("no ratchet binary: set RATCHET_BIN or install Go to build ./cmd/ratchet")
        r = subprocess.run(["go", "build", "-o", out, "./cmd/ratchet"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"go build ./cmd/ratchet failed:\n{r.stdout}{r.stderr}")
        _bin = out
        return _bin


def clean_env() -> dict[str, str]:
    """The environment without RATCHET_* settings, so that a developer's
    own server configuration cannot leak into a test's server or worker."""
    return {k: v for k, v in os.environ.items() if not k.startswith("RATCHET_")}


class Server:
    """`ratchet serve --addr 127.0.0.1:0 --bootstrap-key OWNER_KEY --dev-clock`
    in a temporary directory."""

    def __init__(self, *extra: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="ratchet-py-srv-")
        self.lines: list[str] = []
        self._lock = threading.Lock()
        args = [binary(), "serve", "--addr", "127.0.0.1:0", "--bootstrap-key", OWNER_KEY, "--dev-clock", *extra]
        self.proc = subprocess.Popen(args, cwd=self.dir, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        found = threading.Event()
        self.url = ""

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                with self._lock:
                    self.lines.append(line.rstrip("\n"))
                m = LISTEN_RE.search(line)
                if m and not found.is_set():
                    self.url = m.group(1)
                    found.set()
            found.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        if not found.wait(60) or not self.url:
            self.stop()
            raise RuntimeError("ratchet serve did not print its address:\n" + self.output())
        if not self.url.startswith("http://127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"ratchet serve listens on {self.url}, not loopback")

    def output(self) -> str:
        with self._lock:
            return "\n".join(self.lines)

    def client(self, key: str = OWNER_KEY, **kw: Any) -> ratchet.Client:
        return ratchet.Client(self.url, key, **kw)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class ServerTestCase(unittest.TestCase):
    """One server for the test class; each test makes its own endpoint and tool."""

    server: Server
    owner: ratchet.Client
    _n = 0

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = Server()
        cls.owner = cls.server.client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.owner.close()
        cls.server.stop()

    def tool(self, *, max_attempts: int = 3, delay_ms: int = 1000, timeout_ms: int = 1000, **extra: Any) -> str:
        """A fresh endpoint with a short CUSTOM policy and a tool on it; returns "name@1"."""
        ServerTestCase._n += 1
        name = f"t{ServerTestCase._n}-{self._testMethodName.lower().replace('_', '-')}"[:60]
        ep: ratchet.EndpointCreate = {
            "name": name,
            "preset": "CUSTOM",
            "maxAttempts": max_attempts,
            "initialDelayMs": delay_ms,
            "multiplier": 1,
            "maxDelayMs": delay_ms,
            "jitterPercent": 0,
            "defaultTimeoutMs": timeout_ms,
            "maxConcurrent": 1000,
            "circuitFailureThreshold": 1000,
        }
        ep.update(extra)  # type: ignore[typeddict-item]
        self.owner.create_endpoint(ep)
        self.owner.publish_tool({"name": name, "version": "1", "endpoint": name})
        return name + "@1"

    def worker(self, **kw: Any) -> ratchet.Worker:
        """A worker with test-friendly defaults, stopped at the end of the test."""
        kw.setdefault("wait", 0.5)
        kw.setdefault("concurrency", 4)
        kw.setdefault("id", self._testMethodName)
        self.errors: list[str] = []
        kw.setdefault("on_error", lambda e: self.errors.append(f"{time.monotonic():.3f} {e}"))
        c = self.server.client()
        self.addCleanup(c.close)  # after the worker has stopped (cleanups run last first)
        w = ratchet.Worker(c, **kw)
        self.addCleanup(lambda: w.stop(0, wait=True, timeout=20))
        return w

    def wait_job(self, job_id: int, what: str, ok: Callable[[ratchet.Job], bool], timeout: float = 20.0) -> ratchet.Job:
        return wait_for(lambda: self.owner.get_job(job_id), ok, f"job {job_id} {what}", timeout)

    def context(self) -> str:
        """What a failure message should show: the worker's errors."""
        return "worker errors: " + ("; ".join(getattr(self, "errors", [])) or "none")


def wait_for(get: Callable[[], T], ok: Callable[[T], bool], what: str, timeout: float = 20.0, every: float = 0.05) -> T:
    """Poll get() until ok(value), failing after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        v = get()
        if ok(v):
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for: {what}; last value: {v!r}")
        time.sleep(every)


class Provider:
    """A scripted HTTP server on 127.0.0.1: each request gets the next answer
    of ``script`` (status, headers, delay seconds), the last one repeating.
    ``hold`` makes every request wait until release() (or the test ends)."""

    def __init__(self, script: list[tuple[int, dict[str, str]]] | None = None, delay: float = 0.0) -> None:
        self.script = list(script or [(200, {})])
        self.delay = delay
        self.calls: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.released = threading.Event()
        self.hold = False
        provider = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                with provider.lock:
                    i = len(provider.calls)
                    provider.calls.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    status, headers = provider.script[min(i, len(provider.script) - 1)]
                if provider.hold:
                    provider.released.wait(60)
                elif provider.delay:
                    time.sleep(provider.delay)
                out = b"ok\n" if status < 400 else b"busy\n"
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the caller went away (a killed worker)

            do_GET = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def count(self) -> int:
        with self.lock:
            return len(self.calls)

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()
