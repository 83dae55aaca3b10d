"""A Worker claims jobs for its tools and runs their handlers on threads.

    w = ratchet.Worker(client, id="billing-1", concurrency=8)

    @w.handle("charge@1")
    def charge(job, cancel):
        resp = urllib.request.urlopen(...)     # HTTPError and network errors may propagate
        return resp                            # 2xx succeeds; status and Retry-After go to Ratchet

    w.run()    # until SIGTERM/SIGINT or stop(); then drains gracefully

It claims in batches with a long poll, never holding more jobs than
``concurrency``; heartbeats every running job at a third of its lease; runs
handlers on a pool of threads; sends reports in batches; and retries its
calls to Ratchet with full-jitter backoff. ``cancel`` is a CancelSignal (a
``threading.Event``) set when the job is cancelled by a producer, when its
lease is lost (a heartbeat answered 409: the job was rescued and may run
elsewhere, so nothing is reported for that lease), or when the worker stops
and the grace period is over.

Stopping (``stop()``, or the first SIGTERM/SIGINT in ``run()``) stops
claiming at once, lets running handlers finish within ``grace`` seconds and
reports them; handlers still running after that are signalled and released:
reported as retryable failures, so that another worker takes the jobs
without waiting for their leases to expire. A second signal releases at once.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import queue
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ._types import ClaimedJob, Report, ReportBatchItem
from .client import Abort, Client
from .errors import RatchetError, api_backoff
from .outcomes import Cancelled, Outcome, Permanent, outcome_of

__all__ = ["Worker", "CancelSignal", "WorkerStats", "Handler"]

log = logging.getLogger("ratchet.worker")

CancelReason = Literal["cancelled", "lease_lost", "stopping"]


class CancelSignal(threading.Event):
    """Set when the handler should stop: ``reason`` says why — "cancelled"
    (a producer cancelled the job), "lease_lost" (the lease expired and the
    job was rescued; nothing will be reported for it) or "stopping" (the
    worker stopped and the grace period is over)."""

    def __init__(self) -> None:
        super().__init__()
        self.reason: CancelReason | None = None

    def _fire(self, reason: CancelReason) -> None:
        if not self.is_set():
            self.reason = reason
            self.set()

    def raise_if_set(self) -> None:
        """Raise Cancelled when set."""
        if self.is_set():
            raise Cancelled(self.reason)


Handler = Callable[[ClaimedJob, CancelSignal], Any]


@dataclass
class WorkerStats:
    """Counters of a worker (times from time.monotonic())."""

    claimed: int = 0
    reported: int = 0  # reports the server accepted
    rejected: int = 0  # reports it refused (a stale lease, say)
    lost: int = 0  # leases lost: nothing reported
    released: int = 0  # handlers still running at the end of the grace period
    first_claim_at: float | None = None
    last_report_at: float | None = None


class _Active:
    __slots__ = ("job", "signal", "interval", "lease_lost", "finished", "released")

    def __init__(self, job: ClaimedJob, interval: float) -> None:
        self.job = job
        self.signal = CancelSignal()
        self.interval = interval
        self.lease_lost = False
        self.finished = False  # its result (or release) is decided
        self.released = False


_CLOSE = object()


def _context(e: RatchetError, what: str) -> RatchetError:
    """e with what the worker was doing in its message (e is the cause)."""
    err = RatchetError(e.status, e.code, f"{what}: {e.message}", fields=e.fields, current=e.current, retry_after=e.retry_after, method=e.method, path=e.path)
    err.__cause__ = e
    return err

# The HTTP status of an API error code, for the per-report errors of a batch.
_STATUS_OF_CODE = {"invalid_request": 400, "unauthenticated": 401, "forbidden": 403, "not_found": 404, "conflict": 409, "unavailable": 503, "internal": 500}


class Worker:
    """Runs handlers for tool@version contracts.

    ``concurrency`` handlers run at once (threads); ``batch`` is the most
    jobs per claim (default concurrency); ``wait`` the long poll of a claim
    in seconds; ``report_batch`` the most reports per request; ``grace`` how
    long a stop waits for running handlers; ``heartbeat_fraction`` the
    fraction of the lease between heartbeats. ``claimers`` and ``reporters``
    are how many claim loops and report senders run (threads, default 1
    each); more of them keep more requests in flight, which raises the
    throughput of short jobs (see tools/bench.py). ``on_error`` is told about
    claim, heartbeat and report errors, which the worker retries by itself
    (default: logged to the "ratchet.worker" logger); ``on_report`` gets the
    server's answer to each report.
    """

    def __init__(
        self,
        client: Client,
        *,
        id: str | None = None,
        concurrency: int = 4,
        batch: int | None = None,
        wait: float = 10.0,
        report_batch: int = 100,
        grace: float = 30.0,
        heartbeat_fraction: float = 1 / 3,
        heartbeat_threads: int | None = None,
        claimers: int = 1,
        reporters: int = 1,
        on_error: Callable[[Exception], None] | None = None,
        on_report: Callable[[ReportBatchItem], None] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.client = client
        self.id = id or f"{socket.gethostname()}-{os.getpid()}"
        self.concurrency = concurrency
        self.batch = max(1, min(batch or concurrency, concurrency, 1000))
        self.wait = max(0.0, min(wait, 30.0))
        self.report_batch = max(1, min(report_batch, 1000))
        self.grace = grace
        self.heartbeat_fraction = heartbeat_fraction
        self.heartbeat_threads = heartbeat_threads or min(concurrency, 4)
        self.claimers = max(1, claimers)
        self.reporters = max(1, reporters)
        self.on_error = on_error or (lambda e: log.warning("%s", e))
        self.on_report = on_report
        self.stats = WorkerStats()
        self.handlers: dict[str, Handler] = {}

        self._lock = threading.Condition()  # slots, active jobs, grace
        self._free = concurrency
        self._active: set[_Active] = set()  # claimed, not yet reported, forgotten or released
        self._stopping = threading.Event()
        self._claim_abort = Abort()
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._reports: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._hb_cv = threading.Condition()
        self._hb_heap: list[tuple[float, int, _Active]] = []
        self._hb_seq = itertools.count()
        self._hb_stop = False
        self._hb_queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._started = False
        self._done = threading.Event()
        self._signals = 0
        self._deadline: float | None = None

    # -- registration --------------------------------------------------------

    def handle(self, tool: str, fn: Handler | None = None) -> Any:
        """Register the handler of ``tool`` ("name@version"); usable as a
        decorator: ``@worker.handle("charge@1")``."""
        if "@" not in tool:
            raise ValueError(f'tool must be "name@version", not {tool!r}')
        if fn is None:
            def register(f: Handler) -> Handler:
                self.handlers[tool] = f
                return f
            return register
        self.handlers[tool] = fn
        return fn

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> threading.Thread:
        """Run in a background thread (no signal handlers); stop() ends it."""
        t = threading.Thread(target=self.run, kwargs={"install_signal_handlers": False}, name=f"ratchet-worker-{self.id}", daemon=True)
        t.start()
        return t

    def stop(self, grace: float | None = None, *, wait: bool = False, timeout: float | None = None) -> bool:
        """Stop claiming; let running handlers finish within ``grace``
        seconds (default: the worker's), then release them. With wait, block
        until the worker has drained (True) or timeout passed (False)."""
        with self._lock:
            g = self.grace if grace is None else grace
            d = time.monotonic() + max(0.0, g)
            if self._deadline is None or d < self._deadline:
                self._deadline = d
            self._stopping.set()
            self._lock.notify_all()
        self._claim_abort.cancel()
        if wait:
            return self._done.wait(timeout)
        return self._done.is_set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait until run() has returned."""
        return self._done.wait(timeout)

    def run(self, *, install_signal_handlers: bool = True) -> None:
        """Claim and run jobs until stop() or, in the main thread, SIGTERM or
        SIGINT; then drain (see the module documentation) and return."""
        if not self.handlers:
            raise ValueError("ratchet worker: no handlers registered")
        if self._started:
            raise RuntimeError("a Worker runs once")
        self._started = True
        previous: dict[int, Any] = {}
        if install_signal_handlers and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, self._on_signal)
        threads = [threading.Thread(target=self._handler_loop, name=f"ratchet-handler-{i}", daemon=True) for i in range(self.concurrency)]
        threads += [threading.Thread(target=self._hb_sender, name=f"ratchet-heartbeat-{i}", daemon=True) for i in range(self.heartbeat_threads)]
        threads.append(threading.Thread(target=self._hb_scheduler, name="ratchet-heartbeats", daemon=True))
        reporters = [threading.Thread(target=self._reporter, name=f"ratchet-reporter-{i}", daemon=True) for i in range(self.reporters)]
        claimers = [threading.Thread(target=self._claim_loop, name=f"ratchet-claimer-{i}", daemon=True) for i in range(self.claimers)]
        try:
            for t in threads + reporters + claimers:
                t.start()
            seen = 0
            for claimer in claimers:
                while claimer.is_alive():
                    seen = self._check_signals(seen)
                    claimer.join(0.1)
            # Drain: wait for the running handlers and their reports.
            while True:
                seen = self._check_signals(seen)
                with self._lock:
                    if not self._active:
                        break
                    if self._deadline is not None and time.monotonic() >= self._deadline:
                        self._release_all_locked()
                    self._lock.wait(0.1)
        finally:
            with self._hb_cv:
                self._hb_stop = True
                self._hb_cv.notify_all()
            for _ in range(self.heartbeat_threads):
                self._hb_queue.put(None)
            for _ in range(self.concurrency):
                self._jobs.put(None)
            for _ in reporters:
                self._reports.put(_CLOSE)
            deadline = time.monotonic() + 60
            for r in reporters:
                r.join(max(0.0, deadline - time.monotonic()))
            for sig, h in previous.items():
                signal.signal(sig, h)
            self._done.set()

    def _on_signal(self, signum: int, frame: Any) -> None:
        # Only count here: a signal handler runs between two bytecodes of the
        # main thread, which may hold any lock; run() acts on the count.
        self._signals += 1

    def _check_signals(self, seen: int) -> int:
        n = self._signals
        if n > seen:
            if seen == 0:
                with self._lock:
                    running = len(self._active)
                log.info("stopping: no new claims; %d running job(s) get %.0f s to finish (signal again to release them now)", running, self.grace)
                self.stop()
            else:
                log.info("stopping now: releasing the running jobs")
                self.stop(0)
        return n

    # -- claiming ------------------------------------------------------------

    def _claim_loop(self) -> None:
        tools = sorted(self.handlers)
        failures = 0
        wait_ms = int(self.wait * 1000)
        while not self._stopping.is_set():
            with self._lock:
                while self._free == 0 and not self._stopping.is_set():
                    self._lock.wait()
                if self._stopping.is_set():
                    return
                n = min(self._free, self.batch)
                self._free -= n
            sent = time.monotonic()
            if self.stats.first_claim_at is None:
                self.stats.first_claim_at = sent
            try:
                jobs = self.client.claim(self.id, tools, n, wait_ms, abort=self._claim_abort)
            except RatchetError as e:
                self._give_back(n)
                if self._stopping.is_set():
                    return
                self.on_error(_context(e, "claim"))
                if self._stopping.wait(api_backoff(failures, e.retry_after)):
                    return
                failures += 1
                continue
            except Exception as e:  # a bug or a broken answer: keep going
                self._give_back(n)
                self.on_error(e)
                if self._stopping.wait(api_backoff(failures)):
                    return
                failures += 1
                continue
            failures = 0
            if len(jobs) < n:
                self._give_back(n - len(jobs))
            if jobs:
                # Leases start when the server claims, before its answer:
                # count heartbeat intervals from when the claim was sent, or
                # from a second ago after a long poll (the server answers as
                # soon as it has claimed).
                self._start(jobs, max(sent, time.monotonic() - 1.0))

    def _give_back(self, n: int) -> None:
        with self._lock:
            self._free += n
            self._lock.notify_all()

    def _start(self, jobs: list[ClaimedJob], since: float) -> None:
        frac = self.heartbeat_fraction
        actives = []
        with self._lock:
            self.stats.claimed += len(jobs)
            for j in jobs:
                a = _Active(j, max(0.1, j.get("timeoutMs", 30000) / 1000.0 * frac))
                self._active.add(a)
                actives.append(a)
        with self._hb_cv:
            top = self._hb_heap[0][0] if self._hb_heap else None
            for a in actives:
                heapq.heappush(self._hb_heap, (since + a.interval, next(self._hb_seq), a))
            if top is None or self._hb_heap[0][0] < top:
                self._hb_cv.notify()
        for a in actives:
            self._jobs.put(a)

    # -- handlers ------------------------------------------------------------

    def _handler_loop(self) -> None:
        get = self._jobs.get
        while True:
            a = get()
            if a is None:
                return
            self._execute(a)

    def _execute(self, a: _Active) -> None:
        job = a.job
        fn = self.handlers.get(f"{job['tool']}@{job['version']}")
        try:
            if fn is None:
                raise Permanent(LookupError(f"no handler registered for {job['tool']}@{job['version']}"))
            result: Any = fn(job, a.signal)
        except BaseException as e:  # even SystemExit: the job must be reported
            result = e
        try:
            outcome = outcome_of(result)
        except Exception as e:  # a return value that is not a response after all
            outcome = Outcome.failure(f"could not read the handler's result: {e}")
        self._finish(a, outcome)

    def _finish(self, a: _Active, outcome: Outcome) -> None:
        with self._lock:
            if a.finished:  # released at the end of the grace period
                return
            a.finished = True
            if a.lease_lost:
                # The job was rescued (and may run elsewhere): a report of
                # this lease would be refused; free the slot now.
                self.stats.lost += 1
                self._forget_locked(a)
                return
        self._reports.put((outcome.report(a.job["id"], a.job["leaseToken"]), a))

    def _forget_locked(self, a: _Active) -> None:
        self._active.discard(a)
        self._free += 1
        self._lock.notify_all()

    def _release_all_locked(self) -> None:
        """End of the grace period: signal what still runs and report it as
        a retryable failure, so the job is free before its lease expires."""
        for a in list(self._active):
            if a.finished:
                continue
            a.finished = a.released = True
            a.signal._fire("stopping")
            if a.lease_lost:
                self.stats.lost += 1
                self._forget_locked(a)
                continue
            self.stats.released += 1
            o = Outcome.failure("released: the worker stopped before the handler finished", retryable=True)
            self._reports.put((o.report(a.job["id"], a.job["leaseToken"]), a))
        self._deadline = float("inf")  # once

    # -- heartbeats ----------------------------------------------------------

    def _hb_scheduler(self) -> None:
        heap = self._hb_heap
        with self._hb_cv:
            while not self._hb_stop:
                if not heap:
                    self._hb_cv.wait()
                    continue
                due, _, a = heap[0]
                if a.finished:
                    heapq.heappop(heap)
                    continue
                now = time.monotonic()
                if due > now:
                    self._hb_cv.wait(due - now)
                    continue
                heapq.heappop(heap)
                self._hb_queue.put(a)

    def _hb_sender(self) -> None:
        while True:
            a = self._hb_queue.get()
            if a is None:
                return
            if a.finished:  # its report is on its way, or it was released
                continue
            sent = time.monotonic()
            try:
                res = self.client.heartbeat(a.job["id"], a.job["leaseToken"])
            except RatchetError as e:
                if e.status in (404, 409):
                    a.lease_lost = True
                    a.signal._fire("lease_lost")
                    continue
                self.on_error(_context(e, f"heartbeat job {a.job['id']}"))
            except Exception as e:
                self.on_error(e)
            else:
                if res.get("cancelRequested"):
                    a.signal._fire("cancelled")
            if not a.finished:
                # The next one is due an interval after this one was sent,
                # not after its answer: a slow answer must not stretch the
                # gap between two extensions of the lease.
                with self._hb_cv:
                    heapq.heappush(self._hb_heap, (sent + a.interval, next(self._hb_seq), a))
                    if self._hb_heap[0][2] is a:
                        self._hb_cv.notify()

    # -- reports -------------------------------------------------------------

    def _reporter(self) -> None:
        q = self._reports
        closing = False
        while not closing:
            item = q.get()
            if item is _CLOSE:
                return
            batch = [item]
            while len(batch) < self.report_batch:
                try:
                    item = q.get_nowait()
                except queue.Empty:
                    break
                if item is _CLOSE:
                    closing = True
                    break
                batch.append(item)
            self._send(batch)

    def _send(self, batch: list[tuple[Report, _Active]]) -> None:
        reports = [r for r, _ in batch]
        results: list[ReportBatchItem] | None = None
        for attempt in range(31):
            try:
                results = self.client.report_batch(reports)
                break
            except RatchetError as e:
                if 0 < e.status < 500 and e.status != 429:
                    self.on_error(_context(e, "reports rejected"))
                    break
                # Unreachable or unavailable: keep the reports and retry; a
                # lease that expires meanwhile is rescued by the server and
                # the late report refused harmlessly.
                self.on_error(_context(e, "report"))
                time.sleep(api_backoff(attempt, e.retry_after))
            except Exception as e:
                self.on_error(e)
                break
        now = time.monotonic()
        with self._lock:
            if results is not None:
                for res in results:
                    if res.get("ok"):
                        self.stats.reported += 1
                    else:
                        self.stats.rejected += 1
                self.stats.last_report_at = now
            for _, a in batch:
                self._forget_locked(a)
        if results is not None:
            for res in results:
                if not res.get("ok"):
                    err = res.get("error") or {}
                    code = str(err.get("code", ""))
                    self.on_error(RatchetError(_STATUS_OF_CODE.get(code, 0), code, f"report of job {res.get('jobId')}: {err.get('message', '')}"))
                if self.on_report is not None:
                    try:
                        self.on_report(res)
                    except Exception as e:
                        self.on_error(e)
