#!/usr/bin/env python3
"""A complete Ratchet worker in Python: it claims jobs of one tool, POSTs each
job's payload to an HTTP endpoint, and lets Ratchet decide about retries from
the response (status and Retry-After) or the network error.

    RATCHET_KEY=rk_... python3 examples/worker-py/main.py --tool charge@1 --target http://127.0.0.1:9000/charge

It uses the SDK in sdk/python (found relative to this file; nothing to
install) and the standard library only.
"""

import argparse
import json
import logging
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "sdk" / "python"))

import ratchet  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description="A Ratchet worker that POSTs each job's payload to an HTTP endpoint.")
    p.add_argument("--server", default=os.environ.get("RATCHET_SERVER", "http://127.0.0.1:8080"), help="Ratchet server URL (RATCHET_SERVER)")
    p.add_argument("--tool", default="charge@1", help="the tool@version this worker runs")
    p.add_argument("--target", default="http://127.0.0.1:9000/charge", help="the HTTP endpoint each job's payload is POSTed to")
    p.add_argument("--concurrency", type=int, default=8, help="jobs run at once")
    p.add_argument("--grace", type=float, default=30.0, help="seconds running jobs get to finish after SIGTERM or Ctrl-C")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    log = logging.getLogger("worker")

    client = ratchet.Client(args.server, os.environ.get("RATCHET_KEY"))
    worker = ratchet.Worker(client, concurrency=args.concurrency, grace=args.grace)

    @worker.handle(args.tool)
    def call(job: ratchet.ClaimedJob, cancel: ratchet.CancelSignal) -> None:
        try:
            req = urllib.request.Request(
                args.target,
                data=json.dumps(job["payload"]).encode(),
                method="POST",
                # The destination deduplicates repeated deliveries with this key.
                headers={"Content-Type": "application/json", "Idempotency-Key": job["idempotencyKey"]},
            )
        except ValueError as e:
            raise ratchet.Permanent(e)  # a bad target URL will not get better
        try:
            resp = urllib.request.urlopen(req, timeout=10)
        except urllib.error.HTTPError as answer:  # urllib raises for non-2xx answers
            resp = answer
        # Other errors propagate: dns, connect, timeout, reset — Ratchet retries these.
        with resp:
            log.info("job %d attempt %d: %s answered %d", job["id"], job["attempt"], args.target, resp.status)
            ratchet.check_response(resp)  # 2xx succeeds; status and Retry-After go to Ratchet

    # Ctrl-C or SIGTERM stops claiming; running jobs finish and report.
    log.info("worker for %s calling %s (server %s)", args.tool, args.target, args.server)
    worker.run()
    log.info("stopped")


if __name__ == "__main__":
    main()
