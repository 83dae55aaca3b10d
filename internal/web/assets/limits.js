// Generated from the Go constants of packages backoff and wire by
// internal/web.LimitsJS; do not edit. Regenerate with
//   scripts/generate

const freeze = (v) => {
  if (v && typeof v === "object") {
    Object.values(v).forEach(freeze);
    Object.freeze(v);
  }
  return v;
};

export const LIMITS = freeze({"circuitFailureThreshold":{"max":1000,"min":1},"circuitOpenMs":{"max":86400000,"min":1000},"dailyCallBudget":{"max":100000000,"min":1},"initialDelayMs":{"max":1800000,"min":1000},"jitterPercent":{"max":50,"min":0},"maxAttempts":{"max":10,"min":1},"maxConcurrent":{"max":100000,"min":1},"maxDelayMs":{"max":86400000,"min":1000},"monthlyCallBudget":{"max":100000000,"min":1},"multiplier":{"max":4,"min":1},"quietHoursLen":{"max":11,"min":0},"rateLimitPerMinute":{"max":1000000,"min":1},"timeZoneLen":{"max":64,"min":1},"timeoutMs":{"max":43200000,"min":1000}});
export const ENDPOINT_SETTINGS = freeze([{"bound":"timeoutMs","group":"","help":"How long a worker holds a claimed job before it counts as timed out.","key":"defaultTimeoutMs","kind":"int","label":"Lease timeout","unit":" milliseconds","units":"ms"},{"bound":"maxConcurrent","group":"","help":"Running jobs at once against this endpoint.","key":"maxConcurrent","kind":"int","label":"Max concurrent","unit":"","units":"jobs"},{"bound":"rateLimitPerMinute","group":"","help":"Empty for no limit.","key":"rateLimitPerMinute","kind":"limit","label":"Rate limit","unit":"","units":"claims / minute"},{"bound":"circuitFailureThreshold","group":"","help":"Consecutive provider-unhealthy failures that open the circuit.","key":"circuitFailureThreshold","kind":"int","label":"Circuit threshold","unit":"","units":"failures"},{"bound":"circuitOpenMs","group":"","help":"How long an open circuit blocks claims before a probe.","key":"circuitOpenMs","kind":"int","label":"Circuit open for","unit":" milliseconds","units":"ms"},{"bound":"dailyCallBudget","group":"","help":"Claims in one day, counted from midnight in the budget time zone. Empty for no budget.","key":"dailyCallBudget","kind":"limit","label":"Daily call budget","unit":"","units":"claims / day"},{"bound":"monthlyCallBudget","group":"","help":"Claims in one calendar month, counted from midnight on the 1st in the budget time zone. Empty for no budget.","key":"monthlyCallBudget","kind":"limit","label":"Monthly call budget","unit":"","units":"claims / month"},{"allowed":"must be an IANA time zone name, e.g. \"Europe/Paris\" or \"UTC\"","bound":"timeZoneLen","default":"UTC","group":"","help":"Days, months and quiet hours follow this zone's calendar, daylight saving included, e.g. Europe/Paris.","key":"budgetTimeZone","kind":"text","label":"Budget time zone","unit":"","units":"IANA zone"},{"allowed":"must be \"HH:MM-HH:MM\" in 24-hour time with different start and end, e.g. \"22:00-07:00\", or \"\" for none","bound":"quietHoursLen","default":"","group":"","help":"Claims wait from the start to the end every day, e.g. 22:00-07:00. Empty for none.","key":"quietHours","kind":"text","label":"Quiet hours","unit":"","units":"daily"},{"bound":"maxConcurrent","group":"KeyLimits","help":"Running jobs of one flow key at once. Empty for no limit.","key":"keyMaxConcurrent","kind":"limit","label":"Max concurrent per key","unit":"","units":"jobs"},{"bound":"rateLimitPerMinute","group":"KeyLimits","help":"Claims of one flow key in any 60 seconds. Empty for no limit.","key":"keyRateLimitPerMinute","kind":"limit","label":"Rate limit per key","unit":"","units":"claims / minute"},{"bound":"dailyCallBudget","group":"KeyLimits","help":"Claims of one flow key in a day of the budget time zone. Empty for no budget.","key":"keyDailyCallBudget","kind":"limit","label":"Daily budget per key","unit":"","units":"claims / day"},{"bound":"monthlyCallBudget","group":"KeyLimits","help":"Claims of one flow key in a calendar month of the budget time zone. Empty for no budget.","key":"keyMonthlyCallBudget","kind":"limit","label":"Monthly budget per key","unit":"","units":"claims / month"},{"group":"KeyLimits","help":"One job of a key in flight at a time, in the order they were enqueued.","key":"keyOrdered","kind":"bool","label":"Ordered per key"},{"group":"KeyLimits","help":"Claims take turns across keys, longest waiting first. Always so while a limit per key is set.","key":"fairKeys","kind":"bool","label":"Fair across keys"}]);
export const PRESETS = freeze({"AGGRESSIVE":{"maxAttempts":8,"initialDelayMs":5000,"multiplier":2,"maxDelayMs":300000,"jitterPercent":20},"RELAXED":{"maxAttempts":3,"initialDelayMs":120000,"multiplier":2,"maxDelayMs":1800000,"jitterPercent":20},"STANDARD":{"maxAttempts":5,"initialDelayMs":30000,"multiplier":2,"maxDelayMs":900000,"jitterPercent":20}});
export const PRESET_NAMES = freeze(["STANDARD","AGGRESSIVE","RELAXED","CUSTOM"]);
export const JOB_STATES = freeze(["scheduled","running","succeeded","failed","exhausted","cancelled"]);
export const FINISHED_STATES = freeze(["succeeded","failed","exhausted","cancelled"]);
export const REPLAYABLE_STATES = freeze(["failed","exhausted","cancelled"]);
export const CANCELLABLE_STATES = freeze(["scheduled","running"]);
export const CLAIMABLE_STATES = freeze(["scheduled"]);
export const UNSUCCESSFUL_STATES = freeze(["failed","exhausted"]);
export const JOB_SORTS = freeze(["id_desc","id_asc","finished_desc","finished_asc"]);
export const ATTEMPT_OUTCOMES = freeze(["running","succeeded","failed","timed_out"]);
export const GATES = freeze(["due_time","paused","circuit","recovering","provider_limit","max_concurrent","rate_limit","daily_budget","monthly_budget","delivery_window","key_order","key_concurrency","key_rate","key_daily_budget","key_monthly_budget","none"]);
export const CIRCUIT_STATES = freeze(["closed","open","half_open"]);
export const RUN_STATES = freeze(["open","finished"]);
export const SCOPES = freeze(["owner","producer","worker"]);
export const PLANS = freeze(["FREE","BASIC","PRO"]);
export const SCHEDULE_OVERLAPS = freeze(["skip","allow","cancel_previous"]);
export const SCHEDULE_CATCH_UPS = freeze(["none","latest","all"]);
export const TICK_OUTCOMES = freeze(["enqueued","skipped","replaced","failed"]);
export const ENDPOINT_EVENT_KINDS = freeze(["circuit_opened","circuit_half_open","circuit_closed","paused","resumed","recovery_started","recovery_ended","limit_learned"]);
export const FAILURE_CLASSES = freeze(["throttled","server_error","network","timeout","client_error","worker","other"]);
export const ALERT_SINK_KINDS = freeze(["webhook","slack","teams"]);
export const ALERT_KINDS = freeze(["circuit_opened","circuit_half_open","circuit_closed","paused_long","jobs_exhausted","failure_rate","limit_changed","backlog_recovered","suppressed","test"]);
export const ALERT_DELIVERY_STATES = freeze(["pending","delivered","failed"]);
export const CUSTOM_PLANS = freeze(["BASIC","PRO"]);
export const JITTER_MODES = freeze(["none","full","equal","decorrelated"]);
export const FIRST_WAITS = freeze(["base","multiplied"]);
export const MAX_CALC_ATTEMPTS = 15;
export const SAFETY_LIMIT_MS = 86400000;
export const SIM_LIMITS = freeze({"clientRuns":20000000,"clients":1000,"points":100,"runs":10000});
export const DASHBOARD_ROUTES = freeze([{"name":"overview","path":"/"},{"name":"endpoint","path":"/endpoints/{name}"},{"name":"jobs","path":"/jobs"},{"name":"job","path":"/jobs/{id}"},{"name":"tools","path":"/tools"},{"name":"runs","path":"/runs"},{"name":"run","path":"/runs/{id}"},{"name":"schedules","path":"/schedules"},{"name":"schedule","path":"/schedules/{name}"},{"name":"workers","path":"/workers"},{"name":"history","path":"/history"},{"name":"alerts","path":"/alerts"}]);
export const SEARCH_WINDOW = 50000;
