"""A synchronous client for every route of Ratchet's HTTP API.

    c = ratchet.Client("http://127.0.0.1:8080", os.environ["RATCHET_KEY"])
    job, created = c.enqueue("charge@1", {"orderId": 42}, idempotency_key="order-42")

Connections are kept alive (http.client, one pool per client, safe to share
between threads). Requests that are safe to repeat — reads, claims,
heartbeats, reports, an enqueue with an idempotency key — are retried on
network errors and on 429/502/503/504 with full-jitter exponential backoff
that honours Retry-After; the others are sent once.
"""

from __future__ import annotations

import datetime as _dt
import http.client
import json
import select
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, cast

from ._types import (
    AlertDeliveryList,
    AlertSettings,
    AlertSink,
    AlertSinkKind,
    AlertSinkList,
    AlertTestResult,
    AuditList,
    ClaimedJob,
    ClockAdvance,
    Endpoint,
    EndpointCreate,
    EndpointEventList,
    EndpointPolicyUpdate,
    FailureGroupList,
    FailureReplayResult,
    FlowKeyList,
    HeartbeatResult,
    Hold,
    Job,
    JobBatchItem,
    JobBulkAction,
    JobBulkResult,
    JobCounts,
    JobEnqueue,
    JobList,
    JobQuery,
    JobQuerySort,
    Key,
    KeyScope,
    History,
    Me,
    Overview,
    Report,
    ReportBatchItem,
    ReportResult,
    Run,
    RunList,
    Schedule,
    ScheduleCreate,
    ScheduleFire,
    ScheduleList,
    ScheduleTick,
    ScheduleTickList,
    SimulateConfig,
    SimulateRecovery,
    SimulateRecoveryResult,
    SimulateResult,
    Health,
    Readiness,
    Tool,
    ToolPublish,
    WorkerList,
)
from .errors import RatchetConnectionError, RatchetError, api_backoff, error_from_response
from .sse import EventStreamParser

__all__ = ["Client", "Abort", "OPERATIONS"]

__version__ = "0.1.0"

# The operationId of every route of openapi.json and the Client method that
# calls it (tests/test_client.py checks that none is missing).
OPERATIONS = {
    "getMe": "me",
    "postKeys": "create_key",
    "getKeys": "list_keys",
    "deleteKeysId": "revoke_key",
    "postEndpoints": "create_endpoint",
    "getEndpoints": "list_endpoints",
    "getEndpointsName": "get_endpoint",
    "putEndpointsNamePolicy": "update_endpoint_policy",
    "postEndpointsNamePause": "pause_endpoint",
    "postEndpointsNameResume": "resume_endpoint",
    "postEndpointsNameCircuitClose": "close_circuit",
    "postEndpointsNameCircuitOpen": "open_circuit",
    "getEndpointsNameHeld": "held_jobs",
    "getEndpointsNameKeys": "flow_keys",
    "getEndpointsNameFailures": "failures",
    "postFailuresReplay": "replay_failures",
    "getEndpointsNameEvents": "endpoint_events",
    "getAudit": "audit",
    "postAlertsSinks": "create_alert_sink",
    "getAlertsSinks": "alert_sinks",
    "deleteAlertsSinksName": "delete_alert_sink",
    "postAlertsSinksNameTest": "test_alert_sink",
    "putAlertsSettings": "set_alert_settings",
    "getAlerts": "alerts",
    "postTools": "publish_tool",
    "getTools": "list_tools",
    "getToolsNameVersion": "get_tool",
    "postRuns": "start_run",
    "getRuns": "list_runs",
    "getRunsId": "get_run",
    "postRunsIdFinish": "finish_run",
    "postSchedules": "create_schedule",
    "getSchedules": "schedules",
    "getSchedulesName": "get_schedule",
    "getSchedulesNamePreview": "preview_schedule",
    "getSchedulesNameTicks": "schedule_ticks",
    "postSchedulesNameFire": "fire_schedule",
    "postSchedulesNamePause": "pause_schedule",
    "postSchedulesNameResume": "resume_schedule",
    "deleteSchedulesName": "delete_schedule",
    "postJobs": "enqueue",
    "postJobsBatch": "enqueue_batch",
    "getJobs": "list_jobs",
    "getJobsCount": "count_jobs",
    "getJobsCounts": "job_counts",
    "postJobsBulk": "bulk",
    "getJobsId": "get_job",
    "getJobsIdExplain": "explain_job",
    "postJobsIdCancel": "cancel_job",
    "postJobsIdReplay": "replay_job",
    "postJobsIdRunNow": "run_now",
    "postClaims": "claim",
    "postJobsIdHeartbeat": "heartbeat",
    "postJobsIdReport": "report",
    "postReports": "report_batch",
    "getOverview": "overview",
    "getWorkers": "workers",
    "getHistory": "history",
    "getStream": "stream",
    "postDevClock": "advance_clock",
    "healthz": "healthz",
    "readyz": "readyz",
    "openapi_json": "openapi",
    "postApiSimulate": "simulate",
    "postApiSimulateRecovery": "simulate_recovery",
}

# Errors of a connection the server closed while it sat idle in the pool:
# the request never reached the server, so it is sent again on a new one.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class _HTTPConnection(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _HTTPSConnection(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Abort:
    """Cancels the requests it is passed to from another thread: ``cancel()``
    shuts their sockets down and stops their retries. The Worker uses one to
    end its long-poll claim at once when it stops."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._conns: set[http.client.HTTPConnection] = set()

    def cancel(self) -> None:
        self._event.set()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            sock = c.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        """Sleep up to timeout seconds; True as soon as cancelled."""
        return self._event.wait(timeout)

    def _attach(self, c: http.client.HTTPConnection) -> None:
        with self._lock:
            self._conns.add(c)

    def _detach(self, c: http.client.HTTPConnection) -> None:
        with self._lock:
            self._conns.discard(c)


class Client:
    """Talks to one Ratchet server with one API key.

    ``timeout`` is the socket timeout of a request in seconds (a claim's long
    poll adds its wait). ``retries`` is how many times a request that is safe
    to repeat is sent again; ``max_retry_wait`` the longest Retry-After it
    sleeps for before it gives up and raises instead.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080",
        key: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 4,
        max_retry_wait: float = 30.0,
        max_idle: int = 32,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        u = urllib.parse.urlsplit(base_url.rstrip("/"))
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"base_url must be http(s)://host[:port][/prefix], not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port or (443 if self._https else 80)
        self._prefix = u.path.rstrip("/")
        self._ssl = ssl_context if ssl_context is not None else (ssl.create_default_context() if self._https else None)
        self.key = key
        self.timeout = timeout
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self._max_idle = max_idle
        self._idle: list[http.client.HTTPConnection] = []
        self._closed = False  # close() was called: connections in use are closed when done
        self._lock = threading.Lock()
        self._headers = {"Accept": "application/json", "User-Agent": f"ratchet-python/{__version__}"}
        if key:
            self._headers["Authorization"] = "Bearer " + key

    # -- plumbing ------------------------------------------------------------

    def close(self) -> None:
        """Close the idle connections."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._closed = True
        for c in idle:
            c.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _conn(self) -> tuple[http.client.HTTPConnection, bool]:
        while True:
            with self._lock:
                if not self._idle:
                    break
                c = self._idle.pop()
            if _usable(c):
                return c, True
            c.close()
        if self._https:
            return _HTTPSConnection(self._host, self._port, timeout=self.timeout, context=self._ssl), False
        return _HTTPConnection(self._host, self._port, timeout=self.timeout), False

    def _put(self, c: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self._max_idle:
                self._idle.append(c)
                return
        c.close()

    def _send(self, method: str, path: str, body: bytes | None, headers: dict[str, str], timeout: float, abort: Abort | None, safe: bool) -> tuple[int, http.client.HTTPMessage, bytes]:
        """One exchange on a pooled connection. A pooled connection the
        server closed meanwhile is noticed before use (_usable); when one
        breaks anyway, a request that is safe to repeat goes out again at
        once on a new connection."""
        while True:
            c, reused = self._conn()
            if abort is not None:
                abort._attach(c)
            try:
                if abort is not None and abort.cancelled:
                    raise ConnectionAbortedError("aborted")
                c.timeout = timeout
                if c.sock is not None:
                    c.sock.settimeout(timeout)
                c.request(method, self._prefix + path, body=body, headers=headers)
                resp = c.getresponse()
                data = resp.read()
            except _STALE:
                c.close()
                if safe and reused and not (abort is not None and abort.cancelled):
                    continue
                raise
            except BaseException:
                c.close()
                raise
            finally:
                if abort is not None:
                    abort._detach(c)
            if resp.will_close:
                c.close()
            else:
                self._put(c)
            return resp.status, resp.headers, data

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        retry: bool,
        query: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
        abort: Abort | None = None,
        raw: bool = False,
        accept: tuple[int, ...] = (),
    ) -> tuple[int, Any]:
        """Send a request, retrying it when ``retry`` says it is safe; decode
        the JSON answer (the text when raw); raise RatchetError on an error
        (a status of 400 or more that is not in ``accept``)."""
        if query:
            path += "?" + urllib.parse.urlencode(query)
        h = self._headers
        data = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            h = {**h, "Content-Type": "application/json"}
        if headers:
            h = {**h, **headers}
        n = 0
        while True:
            try:
                status, rh, out = self._send(method, path, data, h, timeout or self.timeout, abort, retry)
            except (OSError, http.client.HTTPException) as e:
                if abort is not None and abort.cancelled:
                    raise RatchetConnectionError(f"{method} {path}: aborted", method=method, path=path) from e
                if retry and n < self.retries:
                    if _sleep(api_backoff(n), abort):
                        raise RatchetConnectionError(f"{method} {path}: aborted", method=method, path=path) from e
                    n += 1
                    continue
                raise RatchetConnectionError(f"{method} {path}: {type(e).__name__}: {e}", method=method, path=path) from e
            if status >= 400 and status not in accept:
                err = error_from_response(status, rh, out, method, path)
                if retry and err.temporary and n < self.retries and (err.retry_after or 0) <= self.max_retry_wait:
                    if _sleep(api_backoff(n, err.retry_after), abort):
                        raise err
                    n += 1
                    continue
                raise err
            if raw:
                return status, out.decode("utf-8", "replace")
            return status, (json.loads(out) if out else None)

    # -- the calling key -----------------------------------------------------

    def me(self) -> Me:
        """The calling key and its project."""
        return self._call("GET", "/v1/me", retry=True)[1]

    # -- keys ----------------------------------------------------------------

    def create_key(self, name: str, scope: KeyScope, tools: Sequence[str] | None = None) -> Key:
        """Create a key: scope owner, producer or worker (with its tool@version
        allowlist). The secret is in ``key``, shown once."""
        body: dict[str, Any] = {"name": name, "scope": scope}
        if tools:
            body["tools"] = list(tools)
        return self._call("POST", "/v1/keys", body, retry=False)[1]

    def list_keys(self) -> list[Key]:
        return self._call("GET", "/v1/keys", retry=True)[1]["keys"]

    def revoke_key(self, key_id: int) -> None:
        self._call("DELETE", f"/v1/keys/{int(key_id)}", retry=False)

    # -- endpoints -----------------------------------------------------------

    def create_endpoint(self, endpoint: EndpointCreate) -> Endpoint:
        """Create an endpoint: ``{"name": ..., "preset": ..., "maxConcurrent": ...}``.
        Keys left out take the server's defaults (STANDARD, 30 s lease, 10
        concurrent, no rate limit)."""
        return self._call("POST", "/v1/endpoints", endpoint, retry=False)[1]

    def get_endpoint(self, name: str) -> Endpoint:
        return self._call("GET", "/v1/endpoints/" + _seg(name), retry=True)[1]

    def list_endpoints(self) -> list[Endpoint]:
        return self._call("GET", "/v1/endpoints", retry=True)[1]["endpoints"]

    def update_endpoint_policy(self, name: str, update: EndpointPolicyUpdate) -> Endpoint:
        """Replace the policy if ``update["expectedVersion"]`` is current; a
        stale version raises a 409 RatchetError whose ``current`` is the
        endpoint as it is now."""
        return self._call("PUT", "/v1/endpoints/" + _seg(name) + "/policy", update, retry=False)[1]

    # -- operator controls ---------------------------------------------------

    def pause_endpoint(self, name: str, reason: str = "") -> Endpoint:
        """Pause an endpoint (owner key): its due jobs wait (gate ``paused``)
        until resume_endpoint. Pausing a paused endpoint keeps the first pause."""
        body = {"reason": reason} if reason else {}
        return self._call("POST", "/v1/endpoints/" + _seg(name) + "/pause", body, retry=False)[1]

    def resume_endpoint(self, name: str) -> Endpoint:
        """Resume a paused endpoint (owner key)."""
        return self._call("POST", "/v1/endpoints/" + _seg(name) + "/resume", retry=False)[1]

    def close_circuit(self, name: str) -> Endpoint:
        """Close the endpoint's circuit now and clear its failure count (owner key)."""
        return self._call("POST", "/v1/endpoints/" + _seg(name) + "/circuit/close", retry=False)[1]

    def open_circuit(self, name: str) -> Endpoint:
        """Open the endpoint's circuit now for its circuitOpenMs (owner key);
        then it half-opens as usual."""
        return self._call("POST", "/v1/endpoints/" + _seg(name) + "/circuit/open", retry=False)[1]

    def held_jobs(self, name: str, *, cursor: str | None = None, limit: int | None = None) -> JobList:
        """The endpoint's due jobs that one of its gates holds now, newest
        first, each with ``heldBy``."""
        q = {k: v for k, v in {"cursor": cursor, "limit": None if limit is None else str(int(limit))}.items() if v}
        return self._call("GET", "/v1/endpoints/" + _seg(name) + "/held", retry=True, query=q)[1]

    def flow_keys(self, name: str, *, limit: int | None = None) -> FlowKeyList:
        """The endpoint's busiest flow keys, most running and scheduled jobs
        first, with the due jobs each key's own limits hold now (``limit``
        1–100, default 10)."""
        q = {"limit": str(int(limit))} if limit is not None else {}
        return self._call("GET", "/v1/endpoints/" + _seg(name) + "/keys", retry=True, query=q)[1]

    def failures(
        self,
        name: str,
        *,
        since: str | _dt.datetime | None = None,
        until: str | _dt.datetime | None = None,
        buckets: int | None = None,
    ) -> FailureGroupList:
        """The endpoint's failed and exhausted jobs of [since, until) grouped
        by classification and message fingerprint, the largest group first,
        each with a sparkline of ``buckets`` counts (defaults: until now,
        since 24 hours before, 24 buckets; at most the latest 10,000 are
        read, ``capped`` says when there were more)."""
        q = {}
        if since is not None:
            q["since"] = _time(since)
        if until is not None:
            q["until"] = _time(until)
        if buckets is not None:
            q["buckets"] = str(int(buckets))
        return self._call("GET", "/v1/endpoints/" + _seg(name) + "/failures", retry=True, query=q)[1]

    def preview_replay_failures(self, **filter: Any) -> FailureReplayResult:
        """Count, changing nothing, the failed and exhausted jobs a filter
        selects that no job replays yet: the count replay_failures expects.
        The filter is any of ``endpoint``, ``state`` (failed or exhausted),
        ``classification``, ``group``, ``since`` and ``until``."""
        body = _failure_filter(filter)
        body["preview"] = True
        return self._call("POST", "/v1/failures/replay", body, retry=True)[1]

    def replay_failures(self, expected_count: int, **filter: Any) -> FailureReplayResult:
        """Replay, as new jobs paced by their endpoints' gates, the jobs the
        filter selects (as preview_replay_failures); ``expected_count`` is
        the preview's count the person confirmed: another count raises a
        409 RatchetError and nothing is done (at most 1000)."""
        body = _failure_filter(filter)
        body["expectedCount"] = int(expected_count)
        return self._call("POST", "/v1/failures/replay", body, retry=False)[1]

    def audit(self, *, target: str | None = None, cursor: str | None = None, limit: int | None = None) -> AuditList:
        """Operator actions newest first (owner key); ``target`` selects e.g.
        ``endpoint:payments`` or ``job:42``."""
        q = {k: v for k, v in {"target": target, "cursor": cursor, "limit": None if limit is None else str(int(limit))}.items() if v}
        return self._call("GET", "/v1/audit", retry=True, query=q)[1]

    def endpoint_events(self, name: str, *, since: str | None = None, cursor: str | None = None, limit: int | None = None) -> EndpointEventList:
        """The endpoint's event log newest first: each change of its circuit,
        its pause, its recovery and its learned limits with the facts known
        then; ``since`` is an RFC 3339 time."""
        q = {k: v for k, v in {"since": since, "cursor": cursor, "limit": None if limit is None else str(int(limit))}.items() if v}
        return self._call("GET", "/v1/endpoints/" + _seg(name) + "/events", retry=True, query=q)[1]

    # -- alerts (docs/alerts.md) ---------------------------------------------

    def create_alert_sink(self, name: str, kind: AlertSinkKind, url: str) -> AlertSink:
        """Add an alert sink (owner key): ``webhook`` (signed with Standard
        Webhooks; the answer's ``secret`` is shown this once), ``slack`` or
        ``teams``."""
        return self._call("POST", "/v1/alerts/sinks", retry=False, body={"name": name, "kind": kind, "url": url})[1]

    def alert_sinks(self) -> AlertSinkList:
        """The project's alert sinks (no secrets) and its thresholds."""
        return self._call("GET", "/v1/alerts/sinks", retry=True)[1]

    def delete_alert_sink(self, name: str) -> None:
        """Delete an alert sink and its alerts not sent yet."""
        self._call("DELETE", "/v1/alerts/sinks/" + _seg(name), retry=False)

    def test_alert_sink(self, name: str) -> AlertTestResult:
        """Queue a test alert for the sink, sent as any alert."""
        return self._call("POST", "/v1/alerts/sinks/" + _seg(name) + "/test", retry=False)[1]

    def set_alert_settings(self, settings: AlertSettings) -> AlertSettings:
        """Replace the project's alert thresholds (every field)."""
        return self._call("PUT", "/v1/alerts/settings", retry=False, body=settings)[1]

    def alerts(self, *, limit: int | None = None) -> AlertDeliveryList:
        """The project's latest alert deliveries, newest first."""
        q = {"limit": str(int(limit))} if limit else {}
        return self._call("GET", "/v1/alerts", retry=True, query=q)[1]

    # -- tools ---------------------------------------------------------------

    def publish_tool(self, tool: ToolPublish) -> Tool:
        """Publish an immutable contract: ``{"name", "version", "endpoint", ...}``."""
        return self._call("POST", "/v1/tools", tool, retry=False)[1]

    def get_tool(self, name: str, version: str) -> Tool:
        return self._call("GET", "/v1/tools/" + _seg(name) + "/" + _seg(version), retry=True)[1]

    def list_tools(self) -> list[Tool]:
        return self._call("GET", "/v1/tools", retry=True)[1]["tools"]

    # -- runs ----------------------------------------------------------------

    def start_run(self, name: str = "") -> Run:
        return self._call("POST", "/v1/runs", {"name": name} if name else {}, retry=False)[1]

    def list_runs(self, *, cursor: str | None = None, limit: int | None = None) -> RunList:
        """The project's runs newest first, without their steps; ``cursor`` is
        the previous page's ``nextCursor``."""
        q = {k: v for k, v in {"cursor": cursor, "limit": None if limit is None else str(int(limit))}.items() if v}
        return self._call("GET", "/v1/runs", retry=True, query=q)[1]

    def get_run(self, run_id: int) -> Run:
        return self._call("GET", f"/v1/runs/{int(run_id)}", retry=True)[1]

    def finish_run(self, run_id: int) -> Run:
        return self._call("POST", f"/v1/runs/{int(run_id)}/finish", retry=False)[1]

    # -- schedules -----------------------------------------------------------

    def create_schedule(self, schedule: ScheduleCreate) -> Schedule:
        """Create a schedule (owner key; docs/schedules.md): ``{"name": ...,
        "cron": "*/5 * * * *", "timeZone": ..., "tool": "name@version", ...}``."""
        return self._call("POST", "/v1/schedules", dict(schedule), retry=False)[1]

    def schedules(self) -> list[Schedule]:
        """Every schedule of the project by name, each with its latest
        ticks, read page after page."""
        out: list[Schedule] = []
        cursor: str | None = None
        while True:
            page = self.schedule_page(cursor=cursor, limit=500)
            out.extend(page["schedules"])
            if page["nextCursor"] is None:
                return out
            cursor = page["nextCursor"]

    def schedule_page(self, *, cursor: str | None = None, limit: int | None = None) -> ScheduleList:
        """One page of the schedules by name (``limit`` 1–500, default
        100); ``cursor`` is the previous page's ``nextCursor``."""
        q = {k: v for k, v in {"cursor": cursor, "limit": None if limit is None else str(int(limit))}.items() if v}
        return self._call("GET", "/v1/schedules", retry=True, query=q)[1]

    def schedule_ticks(self, name: str, *, cursor: str | None = None, limit: int | None = None) -> ScheduleTickList:
        """One page of a schedule's ticks, newest first (``limit`` 1–500,
        default 100)."""
        q = {k: v for k, v in {"cursor": cursor, "limit": None if limit is None else str(int(limit))}.items() if v}
        return self._call("GET", "/v1/schedules/" + _seg(name) + "/ticks", retry=True, query=q)[1]

    def fire_schedule(self, name: str) -> ScheduleTick:
        """Fire a tick of the schedule now, even while it is paused: one
        job due now (owner key; audited as ``schedule.fire_now``)."""
        return self._call("POST", "/v1/schedules/" + _seg(name) + "/fire", retry=False)[1]

    def get_schedule(self, name: str) -> Schedule:
        """A schedule with its latest ticks and their jobs."""
        return self._call("GET", "/v1/schedules/" + _seg(name), retry=True)[1]

    def preview_schedule(self, name: str, *, count: int | None = None) -> list[ScheduleFire]:
        """The schedule's next fire times (``count`` 1–100, default 10),
        each its tick plus the spread offset."""
        q = {"count": str(int(count))} if count is not None else {}
        return self._call("GET", "/v1/schedules/" + _seg(name) + "/preview", retry=True, query=q)[1]["fires"]

    def pause_schedule(self, name: str) -> Schedule:
        """Pause a schedule: no tick fires until it is resumed (owner key)."""
        return self._call("POST", "/v1/schedules/" + _seg(name) + "/pause", retry=False)[1]

    def resume_schedule(self, name: str) -> Schedule:
        """Resume a schedule from its next tick after now (owner key)."""
        return self._call("POST", "/v1/schedules/" + _seg(name) + "/resume", retry=False)[1]

    def delete_schedule(self, name: str) -> None:
        """Delete a schedule and its ticks; the jobs it made stay (owner key)."""
        self._call("DELETE", "/v1/schedules/" + _seg(name), retry=False)

    # -- jobs ----------------------------------------------------------------

    def enqueue(
        self,
        tool: str,
        payload: Any = None,
        *,
        idempotency_key: str | None = None,
        max_attempts: int | None = None,
        run_id: int | None = None,
        run_at: str | _dt.datetime | None = None,
        flow_key: str | None = None,
        traceparent: str | None = None,
        tracestate: str | None = None,
    ) -> tuple[Job, bool]:
        """Store a job of ``tool`` ("name@version"). Returns the job and
        whether it was created: False when the idempotency key returned an
        existing job. Retried on network errors only with an idempotency key.
        ``flow_key`` names the tenant, account or resource the job is made
        for; it wins over the tool's ``flowKeyFrom``. ``traceparent`` (and
        ``tracestate``) is the W3C trace context the job's trace continues
        from: the job keeps it and hands it to its workers and deliveries."""
        body: dict[str, Any] = {"tool": tool}
        if payload is not None:
            body["payload"] = payload
        if idempotency_key:
            body["idempotencyKey"] = idempotency_key
        if max_attempts is not None:
            body["maxAttempts"] = max_attempts
        if run_id:
            body["runId"] = run_id
        if run_at is not None:
            body["runAt"] = _time(run_at)
        if flow_key:
            body["flowKey"] = flow_key
        if traceparent:
            body["traceparent"] = traceparent
        if tracestate:
            body["tracestate"] = tracestate
        status, job = self._call("POST", "/v1/jobs", body, retry=bool(idempotency_key))
        return job, status == 201

    def enqueue_batch(self, jobs: Sequence[JobEnqueue]) -> list[JobBatchItem]:
        """Store 1 to 1000 jobs in one transaction, all or none. Retried only
        when every job has an idempotency key."""
        safe = all(j.get("idempotencyKey") for j in jobs)
        return self._call("POST", "/v1/jobs/batch", {"jobs": list(jobs)}, retry=safe)[1]["jobs"]

    def list_jobs(
        self,
        *,
        state: str | Iterable[str] | None = None,
        tool: str | None = None,
        endpoint: str | None = None,
        run_id: int | None = None,
        flow_key: str | None = None,
        created_after: str | _dt.datetime | None = None,
        created_before: str | _dt.datetime | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        q: str | None = None,
        sort: JobQuerySort | None = None,
    ) -> JobList:
        """One page of jobs, newest first unless ``sort`` says otherwise
        (``id_asc``; ``finished_desc`` or ``finished_asc`` with a ``state``
        of failed and/or exhausted); ``nextCursor`` is None on the last, and
        continues the same ``sort`` only. ``q`` searches: a job id, an exact
        idempotency key, tool or endpoint name, or text in the payload or the
        last error message."""
        query = _query(state, tool, endpoint, run_id, created_after, created_before, cursor, limit, q, flow_key, sort)
        return self._call("GET", "/v1/jobs", retry=True, query=cast(dict, query))[1]

    def iter_jobs(self, **filters: Any) -> Iterator[Job]:
        """Every job matching the filters of list_jobs, page after page."""
        cursor = filters.pop("cursor", None)
        while True:
            page = self.list_jobs(cursor=cursor, **filters)
            yield from page["jobs"]
            cursor = page.get("nextCursor")
            if not cursor:
                return

    def count_jobs(
        self,
        *,
        state: str | Iterable[str] | None = None,
        tool: str | None = None,
        endpoint: str | None = None,
        run_id: int | None = None,
        flow_key: str | None = None,
        created_after: str | _dt.datetime | None = None,
        created_before: str | _dt.datetime | None = None,
        q: str | None = None,
    ) -> int:
        """How many jobs the filters select. A text search (``q`` not a job
        id) counts within the newest 50,000 jobs of the other filters: a
        lower bound when older jobs exist (the answer's ``capped``)."""
        query = _query(state, tool, endpoint, run_id, created_after, created_before, None, None, q, flow_key)
        return self._call("GET", "/v1/jobs/count", retry=True, query=cast(dict, query))[1]["count"]

    def job_counts(self, *, endpoint: str | None = None, tool: str | None = None) -> JobCounts:
        """How many jobs are in each state (``counts``) and in all (``total``):
        of the project, of one endpoint, or of one tool ("name" or
        "name@version"). Without a tool the server reads counters it keeps
        with every change of a job."""
        query: dict[str, str] = {}
        if endpoint:
            query["endpoint"] = endpoint
        if tool:
            query["tool"] = tool
        return self._call("GET", "/v1/jobs/counts", retry=True, query=query)[1]

    def bulk(
        self,
        action: JobBulkAction,
        expected_count: int,
        *,
        state: str | Iterable[str] | None = None,
        tool: str | None = None,
        endpoint: str | None = None,
        run_id: int | None = None,
        flow_key: str | None = None,
        created_after: str | _dt.datetime | None = None,
        created_before: str | _dt.datetime | None = None,
        q: str | None = None,
    ) -> JobBulkResult:
        """Cancel, replay or run now (``run_now``, owner key) every job
        matching the filter (at most 1000). ``expected_count`` is the count
        the person confirmed (count_jobs); when the selection holds another
        count nothing is done (409)."""
        query = _query(state, tool, endpoint, run_id, created_after, created_before, None, None, q, flow_key)
        body = {"action": action, "filter": query, "expectedCount": expected_count}
        return self._call("POST", "/v1/jobs/bulk", body, retry=False)[1]

    def bulk_ids(self, action: JobBulkAction, ids: Sequence[int]) -> JobBulkResult:
        """Cancel, replay or run now (``run_now``, owner key) the jobs listed
        by id (1 to 1000)."""
        body = {"action": action, "ids": [int(i) for i in ids], "expectedCount": len(ids)}
        return self._call("POST", "/v1/jobs/bulk", body, retry=False)[1]

    def run_now(self, job_id: int) -> Job:
        """Make a scheduled job due now (owner key); the gates still apply
        and its attempt count stays. Another state is a 409 naming it."""
        return self._call("POST", f"/v1/jobs/{int(job_id)}/run-now", retry=False)[1]

    def get_job(self, job_id: int) -> Job:
        """A job with its attempts and what holds it."""
        return self._call("GET", f"/v1/jobs/{int(job_id)}", retry=True)[1]

    def explain_job(self, job_id: int) -> Hold:
        """Which gate holds a scheduled job, and until when."""
        return self._call("GET", f"/v1/jobs/{int(job_id)}/explain", retry=True)[1]

    def cancel_job(self, job_id: int) -> Job:
        """Cancel a job: at once when scheduled; a running one is flagged and
        its worker learns it from the next heartbeat."""
        return self._call("POST", f"/v1/jobs/{int(job_id)}/cancel", retry=False)[1]

    def replay_job(self, job_id: int) -> Job:
        """Enqueue a failed, exhausted or cancelled job again as a new job."""
        return self._call("POST", f"/v1/jobs/{int(job_id)}/replay", retry=False)[1]

    # -- workers -------------------------------------------------------------

    def claim(
        self,
        worker_id: str,
        tools: Sequence[str] | None = None,
        max: int = 1,
        wait_ms: int = 0,
        *,
        abort: Abort | None = None,
    ) -> list[ClaimedJob]:
        """Lease up to ``max`` due jobs of ``tools`` (default: the worker
        key's allowlist), long-polling up to ``wait_ms`` when none is due."""
        body: dict[str, Any] = {"workerId": worker_id}
        if tools:
            body["tools"] = list(tools)
        if max != 1:
            body["max"] = max
        if wait_ms:
            body["waitMs"] = int(wait_ms)
        timeout = self.timeout + wait_ms / 1000.0
        return self._call("POST", "/v1/claims", body, retry=True, timeout=timeout, abort=abort)[1]["jobs"]

    def heartbeat(self, job_id: int, lease_token: str) -> HeartbeatResult:
        """Extend a lease; ``cancelRequested`` says the job was cancelled. A
        lease that is no longer the job's raises a 409 RatchetError."""
        return self._call("POST", f"/v1/jobs/{int(job_id)}/heartbeat", {"leaseToken": lease_token}, retry=True)[1]

    def report(self, report: Report) -> ReportResult:
        """Report one outcome; ``report["jobId"]`` names the job. A stale
        lease raises a 409 RatchetError; a repeated report answers
        ``duplicate: true``."""
        body = dict(report)
        job_id = body.pop("jobId")
        return self._call("POST", f"/v1/jobs/{int(job_id)}/report", body, retry=True)[1]

    def report_batch(self, reports: Sequence[Report]) -> list[ReportBatchItem]:
        """Report 1 to 1000 outcomes; each stands on its own (``ok`` or ``error``)."""
        return self._call("POST", "/v1/reports", {"reports": list(reports)}, retry=True)[1]["results"]

    # -- dashboard, development and service routes ---------------------------

    def overview(self) -> Overview:
        """Per-endpoint live state, as the dashboard shows it."""
        return self._call("GET", "/v1/overview", retry=True)[1]

    def workers(self) -> WorkerList:
        """Workers seen in the last 24 hours (claim, heartbeat, report),
        latest activity first, with the running jobs each holds. Owner key."""
        return self._call("GET", "/v1/workers", retry=True)[1]

    def history(self, *, endpoint: str | None = None, hours: int | None = None) -> History:
        """Per-minute claims, outcomes and due-to-claim lag of one endpoint
        (or every one) over the last ``hours`` (1–48, default 6)."""
        q: dict[str, str] = {}
        if endpoint:
            q["endpoint"] = endpoint
        if hours is not None:
            q["hours"] = str(int(hours))
        return self._call("GET", "/v1/history", retry=True, query=q)[1]

    def stream(
        self,
        *,
        job: int | None = None,
        view: str | None = None,
        read_timeout: float = 60.0,
        **filters: Any,
    ) -> Iterator[tuple[str, Any]]:
        """Follow ``GET /v1/stream``: yields ``(event, data)`` pairs as the
        server sends them — ``("job", Job)`` for ``job=ID``, ``("overview",
        Overview)`` for ``view="overview"``, ``("jobs", {"changed", "counts",
        "total"})`` for ``view="jobs"`` with the filters of :meth:`list_jobs`
        (state, tool, endpoint, run_id, created_after, created_before, q).
        The first event is the view as it is; later ones come only when it
        changed. Ping comments are skipped. The stream uses a connection of
        its own, closed when the generator is closed; it ends when the
        server ends it (shutdown, a revoked key: an ``("error", body)``
        event comes first). ``read_timeout`` bounds the silence (the server pings
        every 15 s): past it the stream raises RatchetError ``timeout``; a
        refused or broken connection raises RatchetConnectionError. Not
        retried: reconnect as you see fit."""
        q: dict[str, str] = {}
        if job is not None:
            q["job"] = str(int(job))
        if view is not None:
            q["view"] = view
        if filters:
            q.update(_query(filters.get("state"), filters.get("tool"), filters.get("endpoint"), filters.get("run_id"),
                            filters.get("created_after"), filters.get("created_before"), None, None, filters.get("q"),
                            filters.get("flow_key"), filters.get("sort")))
            unknown = set(filters) - {"state", "tool", "endpoint", "run_id", "flow_key", "created_after", "created_before", "q", "sort"}
            if unknown:
                raise TypeError(f"stream() got unknown filters: {sorted(unknown)}")
        path = "/v1/stream?" + urllib.parse.urlencode(q)
        if self._https:
            c: http.client.HTTPConnection = _HTTPSConnection(self._host, self._port, timeout=self.timeout, context=self._ssl)
        else:
            c = _HTTPConnection(self._host, self._port, timeout=self.timeout)
        try:
            try:
                c.request("GET", self._prefix + path, headers={**self._headers, "Accept": "text/event-stream"})
                # From here the socket waits at most read_timeout for a byte
                # (set now: getresponse hands the socket to the response and
                # drops c.sock when the server will close the connection).
                if c.sock is not None:
                    c.sock.settimeout(read_timeout)
                resp = c.getresponse()
            except TimeoutError:
                raise RatchetError(0, "timeout", f"GET /v1/stream: no answer within {read_timeout} s", method="GET", path=path) from None
            except OSError as e:
                raise RatchetConnectionError(f"GET /v1/stream: {type(e).__name__}: {e}", method="GET", path=path) from e
            if resp.status >= 400:
                raise error_from_response(resp.status, resp.headers, resp.read(), "GET", path)
            parser = EventStreamParser()
            while True:
                try:
                    chunk = resp.read1(1 << 16)
                except TimeoutError:
                    raise RatchetError(0, "timeout", f"GET /v1/stream: nothing heard for {read_timeout} s, not even a ping", method="GET", path=path) from None
                except OSError as e:
                    raise RatchetConnectionError(f"GET /v1/stream: {type(e).__name__}: {e}", method="GET", path=path) from e
                if not chunk:
                    return
                try:
                    events = parser.push(chunk)
                except ValueError as e:
                    raise RatchetError(0, "bad_stream", f"GET /v1/stream: {e}", method="GET", path=path) from None
                for ev in events:
                    try:
                        data = json.loads(ev.data) if ev.data else None
                    except ValueError as e:
                        raise RatchetError(0, "bad_stream", f"GET /v1/stream: event {ev.event} is not JSON: {e}", method="GET", path=path) from None
                    yield (ev.event, data)
        finally:
            c.close()

    def advance_clock(self, advance_ms: int) -> ClockAdvance:
        """Move the clock of a server started with --dev-clock (tests of long
        backoffs). Not retried: advancing twice would move it twice."""
        return self._call("POST", "/v1/dev/clock", {"advanceMs": int(advance_ms)}, retry=False)[1]

    def healthz(self) -> Health:
        """Liveness: the process serves HTTP, ``{"status": "ok"}``."""
        return self._call("GET", "/healthz", retry=True)[1]

    def readyz(self) -> Readiness:
        """Readiness: whether the store answers. A 503 is an answer here,
        not an error: it comes back as ``{"status": "unavailable", ...}`` at
        once, unretried, so a health check sees it."""
        return self._call("GET", "/readyz", retry=False, accept=(503,))[1]

    def openapi(self) -> dict[str, Any]:
        """The server's OpenAPI document."""
        return self._call("GET", "/openapi.json", retry=True)[1]

    def simulate(self, config: SimulateConfig) -> SimulateResult:
        """Run the contention simulator (503 while another sweep runs)."""
        return self._call("POST", "/api/simulate", config, retry=True, timeout=max(self.timeout, 120.0))[1]

    def simulate_recovery(self, scenario: SimulateRecovery) -> SimulateRecoveryResult:
        """Run the simulator's recovery scenario: a held backlog released at
        once, by the recovery ramp, or by the ramp with learned limits, at
        the provider (503 while another simulation runs)."""
        return self._call("POST", "/api/simulate/recovery", scenario, retry=True, timeout=max(self.timeout, 120.0))[1]


def _usable(c: http.client.HTTPConnection) -> bool:
    """Whether an idle keep-alive connection is still open: a socket that is
    readable while idle was closed by the server (or holds garbage)."""
    sock = c.sock
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


def _sleep(seconds: float, abort: Abort | None) -> bool:
    """Sleep; True when the abort fired meanwhile."""
    if abort is not None:
        return abort.wait(seconds)
    time.sleep(seconds)
    return False


def _seg(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def _time(t: str | _dt.datetime) -> str:
    if isinstance(t, str):
        return t
    if t.tzinfo is None:
        raise ValueError("a naive datetime is ambiguous: give it a timezone")
    return t.astimezone(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_FAILURE_FILTER = ("endpoint", "state", "classification", "group", "since", "until")


def _failure_filter(f: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(f) - set(_FAILURE_FILTER))
    if unknown:
        raise TypeError(f"unknown failure filter {unknown[0]!r}; the filter takes {', '.join(_FAILURE_FILTER)}")
    body: dict[str, Any] = {}
    for k in _FAILURE_FILTER:
        v = f.get(k)
        if v is None:
            continue
        body[k] = _time(v) if k in ("since", "until") else str(v)
    return body


def _query(state, tool, endpoint, run_id, created_after, created_before, cursor, limit, search=None, flow_key=None, sort=None) -> JobQuery:
    q: dict[str, str] = {}
    if sort:
        q["sort"] = sort
    if search:
        q["q"] = search
    if state:
        q["state"] = state if isinstance(state, str) else ",".join(state)
    if tool:
        q["tool"] = tool
    if endpoint:
        q["endpoint"] = endpoint
    if run_id:
        q["runId"] = str(int(run_id))
    if flow_key:
        q["flowKey"] = flow_key
    if created_after is not None:
        q["createdAfter"] = _time(created_after)
    if created_before is not None:
        q["createdBefore"] = _time(created_before)
    if cursor:
        q["cursor"] = cursor
    if limit:
        q["limit"] = str(int(limit))
    return cast(JobQuery, q)
