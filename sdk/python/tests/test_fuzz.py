"""Randomised tests of the SDK's parsers of server text — the event stream
and Retry-After — in the manner of a fuzz test: thousands of inputs from a
seeded generator (RATCHET_FUZZ_SEED repeats a run; the seed is in every
failure message), checked against properties rather than fixed answers."""

from __future__ import annotations

import http.server
import os
import random
import re
import threading
import time
import unittest
from email.utils import formatdate

import ratchet
from ratchet import MAX_EVENT_BYTES, EventStreamParser, ServerEvent, parse_http_date, parse_retry_after

SEED = int(os.environ.get("RATCHET_FUZZ_SEED", random.randrange(2**31)))
ROUNDS = int(os.environ.get("RATCHET_FUZZ_ROUNDS", "3000"))

PIECES = ["\n", "\r", "\r\n", "\n\n", ":", ": ping", " ", "data", "data:", "data: ", "event", "event:", "event: job", "id: 1",
          "retry: 5", '{"id":1}', "é", "€", "😀", "\x00", "x", "ab", "\ufeff", "²", "٣"]


def random_text(r: random.Random) -> str:
    return "".join(r.choice(PIECES) for _ in range(r.randrange(40)))


def reference(text: str) -> list[ServerEvent]:
    """The plain reading of a whole stream: cut into lines, then read them."""
    lines = []
    while (m := re.search(r"\r\n|\r|\n", text)) is not None:
        lines.append(text[: m.start()])
        text = text[m.end():]
    out, event, data = [], "", None
    for line in lines:
        if line == "":
            if data is not None:
                out.append(ServerEvent(event or "message", "\n".join(data)))
            event, data = "", None
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "data":
                data = (data or []) + [value]
    return out


def chunks(r: random.Random, b: bytes) -> list[bytes]:
    out, at = [], 0
    while at < len(b):
        n = 1 + r.randrange(9)
        out.append(b[at:at + n])
        at += n
    return out


class EventStreamFuzzTest(unittest.TestCase):
    def test_chunked_bytes_read_as_the_whole_text(self) -> None:
        r = random.Random(SEED)
        for n in range(ROUNDS):
            text = random_text(r)
            raw = text.encode("utf-8", errors="surrogatepass")
            p = EventStreamParser()
            got = [e for c in chunks(r, raw) for e in p.push(c)]
            self.assertEqual(got, reference(raw.decode("utf-8", errors="replace")), f"seed {SEED} round {n}: {text!r}")

    def test_invalid_utf8_reads_as_replacement(self) -> None:
        r = random.Random(SEED + 3)
        for n in range(ROUNDS // 4):
            raw = bytes(r.randrange(256) for _ in range(r.randrange(30))) + r.choice([b"\n\n", b"\r\r", b"data: \xff\xfe\n\n"])
            p = EventStreamParser()
            got = [e for c in chunks(r, raw) for e in p.push(c)]
            self.assertEqual(got, reference(raw.decode("utf-8", errors="replace")), f"seed {SEED} round {n}: {raw!r}")

    def test_server_events_come_back_as_sent(self) -> None:
        r = random.Random(SEED + 1)
        for n in range(ROUNDS // 4):
            sent, wire = [], ""
            for i in range(r.randrange(6)):
                data = re.sub(r"[\r\n]", "", random_text(r))
                sent.append(ServerEvent(f"e{i}", data))
                wire += f": ping\n\nevent: e{i}\ndata: {data}\n\n"
            p = EventStreamParser()
            got = [e for c in chunks(r, wire.encode()) for e in p.push(c)]
            self.assertEqual(got, sent, f"seed {SEED} round {n}")

    def test_bounds(self) -> None:
        with self.assertRaisesRegex(ValueError, "line longer"):
            EventStreamParser().push(b"data: " + b"x" * MAX_EVENT_BYTES)
        p = EventStreamParser()
        with self.assertRaisesRegex(ValueError, "data longer"):
            for _ in range(17):
                p.push(b"data: " + b"x" * (1 << 20) + b"\n")


def http_dates(t: float) -> list[str]:
    g = time.gmtime(t)
    long_day = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")[g.tm_wday]
    return [
        formatdate(t, usegmt=True),
        time.strftime(f"{long_day}, %d-%b-%y %H:%M:%S GMT", g),
        time.strftime("%a %b ", g) + f"{g.tm_mday:2d}" + time.strftime(" %H:%M:%S %Y", g),
    ]


class RetryAfterFuzzTest(unittest.TestCase):
    def test_dates_read_exactly_and_anything_else_stays_in_bounds(self) -> None:
        r = random.Random(SEED + 2)
        now = 1796284800.0  # 2026-12-03T08:00:00Z
        for n in range(ROUNDS):
            ahead = r.randrange(7200)
            for v in http_dates(now + ahead):
                self.assertEqual(parse_http_date(v), now + ahead, f"seed {SEED}: {v}")
                self.assertEqual(parse_retry_after(v, now), float(min(ahead, 3600)), f"seed {SEED}: {v}")
            v = http_dates(now + ahead)[0]
            i = r.randrange(len(v))
            for s in (v[:i] + r.choice(PIECES) + v[i + 1:], random_text(r), str(r.randrange(10**7)) + random_text(r)):
                wait = parse_retry_after(s, now)
                self.assertTrue(wait is None or 0.0 <= wait <= 3600.0, f"seed {SEED}: {s!r} gave {wait}")
                t = parse_http_date(s)
                self.assertTrue(t is None or s in http_dates(t), f"seed {SEED}: {s!r} read as {t}")

    def test_lenient_forms_are_refused(self) -> None:
        # "²".isdigit() is true but int("²") raises; the asctime form was read
        # in local time; a numeric zone is not an HTTP date.
        for v in ("²", "٣", "May 5", "3 Dec 2026 08:00:30", "Thu, 03 Dec 2026 08:00:30 +0500", "Thu, 31 Feb 2026 08:00:30 GMT"):
            self.assertIsNone(parse_retry_after(v, 0.0), v)


class BadStreamTest(unittest.TestCase):
    def test_a_stream_that_is_not_json_raises_bad_stream(self) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(b'event: job\r\ndata: {"id":1}\r\n\r\nevent: job\ndata: {not json\n\n')
                self.wfile.flush()

            def log_message(self, *args: object) -> None:
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        c = ratchet.Client(f"http://127.0.0.1:{srv.server_address[1]}", "key")
        got = []
        with self.assertRaises(ratchet.RatchetError) as cm:
            for e in c.stream(job=1, read_timeout=5):
                got.append(e)
        self.assertEqual(cm.exception.code, "bad_stream")
        self.assertIn("event job is not JSON", cm.exception.message)
        self.assertEqual(got, [("job", {"id": 1})])

    def test_a_silent_stream_raises_timeout(self) -> None:
        quit_ = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(b'event: job\ndata: {"id":1}\n\n')
                self.wfile.flush()
                quit_.wait(10)  # silent, the connection left open

            def log_message(self, *args: object) -> None:
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        self.addCleanup(quit_.set)
        c = ratchet.Client(f"http://127.0.0.1:{srv.server_address[1]}", "key")
        got = []
        start = time.monotonic()
        with self.assertRaises(ratchet.RatchetError) as cm:
            for e in c.stream(job=1, read_timeout=0.3):
                got.append(e)
        self.assertEqual(cm.exception.code, "timeout")
        self.assertGreaterEqual(time.monotonic() - start, 0.29)
        self.assertEqual(got, [("job", {"id": 1})])

    def test_a_refused_stream_raises_connection_error(self) -> None:
        import socket

        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nothing listens there now
        with self.assertRaises(ratchet.RatchetConnectionError) as cm:
            next(ratchet.Client(f"http://127.0.0.1:{port}", "k").stream(job=1))
        self.assertEqual(cm.exception.code, "network")


if __name__ == "__main__":
    unittest.main()
