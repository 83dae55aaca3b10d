#!/usr/bin/env python3
"""Burn-down throughput of the Python SDK's Worker.

    RATCHET_SERVER=http://127.0.0.1:8080 RATCHET_KEY=rk_... \\
        python3 sdk/python/tools/bench.py --setup --jobs 20000

With --setup it first creates an endpoint (no concurrency or rate limit to
speak of, a 300 s lease) and a tool of its own and enqueues N no-op jobs in
batches of 1000 (timed apart); without it, --tool names a tool whose N jobs
are already enqueued. Then one ratchet.Worker with a no-op handler burns
them down: --claimers claim loops taking up to --batch jobs each (the long
poll returns at once while jobs are due), --concurrency handler threads,
--reporters threads sending batched reports. The defaults (4 claim loops of
100 jobs, 400 held at once) mirror `ratchet bench --mode http` (C 4
claimers, B 100 jobs per claim and per report).

Method: wall time from the first claim request to the moment the server has
acknowledged the report of the N-th job; jobs/s = N / that time. Every
report acknowledged is counted, and the run fails unless N succeeded.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ratchet  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default=os.environ.get("RATCHET_SERVER", "http://127.0.0.1:8080"))
    ap.add_argument("--tool", help='the tool of pre-enqueued jobs ("name@version"); not with --setup')
    ap.add_argument("--setup", action="store_true", help="create an endpoint and tool and enqueue the jobs first")
    ap.add_argument("--jobs", type=int, default=20000, help="N: jobs to burn down")
    ap.add_argument("--concurrency", type=int, default=400, help="handler threads (jobs held at once)")
    ap.add_argument("--batch", type=int, default=100, help="most jobs per claim")
    ap.add_argument("--report-batch", type=int, default=100, help="most reports per request")
    ap.add_argument("--claimers", type=int, default=4, help="claim loops (threads)")
    ap.add_argument("--reporters", type=int, default=4, help="report senders (threads)")
    args = ap.parse_args()
    key = os.environ.get("RATCHET_KEY")
    if not key:
        ap.error("RATCHET_KEY must hold an owner key (or a worker key with --tool)")
    if bool(args.setup) == bool(args.tool):
        ap.error("give either --setup or --tool")

    c = ratchet.Client(args.server, key)
    tool = args.tool
    print(f"ratchet python bench: {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, server {args.server}")
    if args.setup:
        name = f"bench-py-{int(time.time() * 1000) % 1_000_000_000}"
        c.create_endpoint({"name": name, "preset": "STANDARD", "defaultTimeoutMs": 300_000, "maxConcurrent": 100_000})
        c.publish_tool({"name": name, "version": "1", "endpoint": name, "description": "does nothing (python bench)"})
        tool = name + "@1"
        t0 = time.perf_counter()
        left = args.jobs
        while left:
            n = min(left, 1000)
            c.enqueue_batch([{"tool": tool, "payload": {}} for _ in range(n)])
            left -= n
        dt = time.perf_counter() - t0
        print(f"enqueue:    {args.jobs} jobs in {dt:.3f}s = {args.jobs / dt:.0f} jobs/s")

    done = threading.Event()
    ok = 0
    lock = threading.Lock()
    last_ack = 0.0

    def on_report(res: ratchet.ReportBatchItem) -> None:
        nonlocal ok, last_ack
        with lock:
            if res.get("ok") and res.get("state") == "succeeded":
                ok += 1
                if ok >= args.jobs:
                    last_ack = time.monotonic()
                    done.set()

    errors: list[Exception] = []
    w = ratchet.Worker(
        c,
        id="python-bench",
        concurrency=args.concurrency,
        batch=args.batch,
        wait=1.0,
        report_batch=args.report_batch,
        claimers=args.claimers,
        reporters=args.reporters,
        on_report=on_report,
        on_error=errors.append,
    )
    w.handle(tool, lambda job, cancel: None)
    print(f"sizes:      N {args.jobs} jobs, concurrency {w.concurrency}, {w.claimers} claim loops of up to {w.batch} jobs, {w.reporters} report senders of up to {w.report_batch} reports")
    print("method:     one Worker, no-op handler; wall time from the first claim request until the report of the N-th job is acknowledged")
    w.start()
    finished = done.wait(max(60.0, args.jobs / 100))
    w.stop(0, wait=True, timeout=30)
    if not finished:
        print(f"only {ok} of {args.jobs} jobs reported succeeded; errors: {errors[:3]}", file=sys.stderr)
        return 1
    first = w.stats.first_claim_at
    assert first is not None
    dt = last_ack - first
    print(f"burn-down:  {args.jobs} jobs in {dt:.3f}s = {args.jobs / dt:.0f} jobs/s")
    if errors:
        print(f"({len(errors)} API errors were retried, first: {errors[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
