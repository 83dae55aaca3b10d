// Names for the schemas of openapi.json. Every type here is an alias of a
// generated type (schema.ts), so the SDK cannot drift from the document.
import type { components, paths } from "./schema.js";

export type { components, paths };

type S = components["schemas"];

/** The calling key and its project (GET /v1/me). */
export type Me = S["Me"];
/** An API key; `key` (the secret) is set only in the create answer. */
export type Key = S["Key"];
/** POST /v1/keys. */
export type KeyCreate = S["KeyCreate"];
/** A key's scope. */
export type Scope = S["KeyCreate"]["scope"];
/** A retry policy document: a preset, or CUSTOM with every field. */
export type RetryPolicy = S["RetryPolicy"];
/** A preset name. */
export type Preset = S["RetryPolicy"]["preset"];
/** POST /v1/endpoints: the name, the retry policy's fields and the endpoint settings, flat. */
export type EndpointCreate = S["EndpointCreate"];
/** PUT /v1/endpoints/{name}/policy. */
export type EndpointPolicyUpdate = S["EndpointPolicyUpdate"];
/** An endpoint with its policy, schedule, settings and circuit. */
export type Endpoint = S["Endpoint"];
/** Who paused an endpoint, when and why. */
export type EndpointPause = S["EndpointPause"];
/** One operator action of the audit log. */
export type AuditEntry = S["AuditEntry"];
/** One page of the audit log (GET /v1/audit); nextCursor is null on the last page. */
export type AuditList = S["AuditList"];
export type RunList = S["RunList"];
/** One page of an endpoint's event log (GET /v1/endpoints/{name}/events), newest first. */
export type EndpointEventList = S["EndpointEventList"];
/** One change of an endpoint: its circuit, pause, recovery or learned limit, with the facts known then. */
export type EndpointEvent = S["EndpointEvent"];
/** POST /v1/alerts/sinks: a webhook (Standard Webhooks signed), Slack or Teams sink. */
export type AlertSinkCreate = S["AlertSinkCreate"];
/** An alert sink; secret is set once, in the answer that added it. */
export type AlertSink = S["AlertSink"];
/** The project's alert sinks and thresholds. */
export type AlertSinkList = S["AlertSinkList"];
/** A project's alert thresholds (docs/alerts.md). */
export type AlertSettings = S["AlertSettings"];
/** The test alert queued for a sink. */
export type AlertTestResult = S["AlertTestResult"];
/** The project's latest alert deliveries, newest first. */
export type AlertDeliveryList = S["AlertDeliveryList"];
/** What an alert sink receives. */
export type Alert = S["Alert"];
/** POST /v1/tools: a tool contract to publish. */
export type ToolPublish = S["ToolPublish"];
/** A published tool contract. */
export type Tool = S["Tool"];
/** POST /v1/runs. */
export type RunCreate = S["RunCreate"];
/** A group of steps (jobs). */
export type Run = S["Run"];
/** POST /v1/schedules: a recurring job (docs/schedules.md). */
export type ScheduleCreate = S["ScheduleCreate"];
/** A schedule with its next tick and latest ticks. */
export type Schedule = S["Schedule"];
/** One tick of a schedule and what it did. */
export type ScheduleTick = S["ScheduleTick"];
/** One coming tick of a preview: the tick and its fire time (tick plus spread). */
export type ScheduleFire = S["ScheduleFire"];
/** One page of the schedules by name; nextCursor is null on the last page. */
export type ScheduleList = S["ScheduleList"];
/** One page of a schedule's ticks, newest first; nextCursor is null on the last page. */
export type ScheduleTickList = S["ScheduleTickList"];
/** A schedule's ticks since a time, by outcome. */
export type TickCounts = S["TickCounts"];
/** A job as the API returns it. */
export type Job = S["Job"];
/** A job's state. */
export type JobState = S["Job"]["state"];
/** One claim of a job and the delay arithmetic that followed. */
export type Attempt = S["Attempt"];
/** How an attempt ended. */
export type AttemptOutcome = S["Attempt"]["outcome"];
/** What holds a scheduled job back. */
export type Hold = S["Hold"];
/** POST /v1/jobs, and one job of a batch enqueue. */
export type JobEnqueue = S["JobEnqueue"];
/** One result of a batch enqueue. */
export type JobBatchItem = S["JobBatchItem"];
/** GET /v1/endpoints/{name}/keys: an endpoint's busiest flow keys. */
export type FlowKeyList = S["FlowKeyList"];
/** One flow key's jobs on an endpoint and what holds them. */
export type FlowKeyLoad = S["FlowKeyLoad"];
/** GET /v1/endpoints/{name}/failures: an endpoint's failures grouped by classification and message fingerprint. */
export type FailureGroupList = S["FailureGroupList"];
/** One group of failures: counts, first and last seen, sparkline. */
export type FailureGroup = S["FailureGroup"];
/** POST /v1/failures/replay: the filter of a replay (preview and expectedCount are set by the methods). */
export type FailureReplay = S["FailureReplay"];
/** What a replay by filter counted and did. */
export type FailureReplayResult = S["FailureReplayResult"];
/** One page of a job list; nextCursor is null on the last page. */
export type JobList = S["JobList"];
/** GET /v1/jobs/counts: the count of each state and the total. */
export type JobCounts = S["JobCounts"];
/** The count of each job state. */
export type JobStateCounts = S["JobStateCounts"];
/** The job selection of list, count and bulk, as the API takes it (strings). */
export type JobQuery = S["JobQuery"];
/** The order of a jobs list (wire.JobSorts; newest first when left out). */
export type JobSort = NonNullable<S["JobQuery"]["sort"]>;
/** POST /v1/jobs/bulk. */
export type JobBulk = S["JobBulk"];
/** What a bulk action did. */
export type JobBulkResult = S["JobBulkResult"];
/** POST /v1/claims. */
export type ClaimRequest = S["ClaimRequest"];
/** A job leased to a worker. */
export type ClaimedJob = S["ClaimedJob"];
/** The extended lease; cancelRequested tells the worker to stop. */
export type HeartbeatResult = S["HeartbeatResult"];
/** A worker's outcome of one attempt. */
export type Report = S["Report"];
/** The network failure kinds a report may carry. */
export type ErrorKind = Exclude<NonNullable<S["Report"]["errorKind"]>, "">;
/** The answer to a single report. */
export type ReportResult = S["ReportResult"];
/** One result of a batch report. */
export type ReportBatchItem = S["ReportBatchItem"];
/** How a report was classified. */
export type Decision = S["Decision"];
/** GET /v1/overview. */
export type Overview = S["Overview"];
/** GET /v1/workers. */
export type WorkerList = S["WorkerList"];
/** A worker as the servers saw it, with the running jobs it holds. */
export type WorkerStatus = S["WorkerStatus"];
/** GET /v1/history. */
export type History = S["History"];
/** One endpoint's per-minute points. */
export type HistorySeries = S["HistorySeries"];
/** One endpoint's minute: claims, outcomes, due-to-claim lag. */
export type HistoryPoint = S["HistoryPoint"];
/** POST /v1/dev/clock, request and answer. */
export type ClockAdvance = S["ClockAdvance"];
/** The body of every error answer. */
export type ErrorBody = S["ErrorBody"];
/** The detail of an error answer. */
export type ErrorDetail = S["ErrorDetail"];
/** One rejected field of an invalid request. */
export type FieldError = S["FieldError"];
/** POST /api/simulate: the contention simulator's config. */
export type SimulateConfig = S["SimulateConfig"];
/** The contention simulator's answer. */
export type SimulateResult = S["SimulateResult"];
/** GET /healthz: the process serves HTTP. */
export type Health = S["Health"];
/** GET /readyz: whether the store answers, and which store it is. */
export type Readiness = S["Readiness"];
