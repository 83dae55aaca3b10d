package engine

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// historySettleMs is how long after a window ends its failure rate is
// read: the history service rolls a minute up once it has closed.
const historySettleMs = 90_000

// CheckAlerts raises the alerts no single event marks, for the projects
// that have sinks: an endpoint paused longer than pausedAfterMs (once per
// pause), and per endpoint and closed window the jobs exhausted in it
// (one alert counting them) and a failure rate at or over
// failureRatePercent of at least failureRateMin finished attempts. Dedup
// keys keep each once across passes and nodes.
func (e *Engine) CheckAlerts(ctx context.Context) error {
	err := e.st.Tx(ctx, func(q store.Queries) error {
		if _, err := q.AlertFeedGet(ctx); err != nil { // one node at a time
			return err
		}
		now, err := e.txNow(ctx, q)
		if err != nil {
			return err
		}
		eps, err := q.EndpointList(ctx, 0)
		if err != nil {
			return err
		}
		ap := &alertPass{q: q, now: now, projects: map[int64]*alertProject{}}
		byProject := map[int64][]*store.Endpoint{}
		for i := range eps {
			byProject[eps[i].ProjectID] = append(byProject[eps[i].ProjectID], &eps[i])
		}
		for id, eps := range byProject {
			pr, err := ap.project(ctx, id)
			if err != nil {
				return err
			}
			if len(pr.sinks) == 0 {
				continue
			}
			if err := e.checkPaused(ctx, ap, pr, eps); err != nil {
				return err
			}
			if err := e.checkWindow(ctx, ap, pr, id, eps); err != nil {
				return err
			}
		}
		return nil
	})
	return storeErr(err, "alerts")
}

func (e *Engine) checkPaused(ctx context.Context, ap *alertPass, pr *alertProject, eps []*store.Endpoint) error {
	for _, ep := range eps {
		if ep.PausedAt == 0 || ap.now-ep.PausedAt < pr.set.PausedAfterMs {
			continue
		}
		held, err := scheduledJobs(ctx, ap.q, ep)
		if err != nil {
			return err
		}
		d := time.Duration(ap.now-ep.PausedAt) * time.Millisecond
		b := &wire.Alert{Kind: wire.AlertPausedLong, Endpoint: ep.Name, At: FormatTime(ap.now), HeldJobs: held,
			Summary: fmt.Sprintf("Endpoint %s paused for %s", ep.Name, d.Round(time.Minute)),
			Detail: fmt.Sprintf("endpoint %s was paused by %s at %s (%q), longer than pausedAfterMs %d; its %d scheduled jobs wait for a resume",
				ep.Name, ep.PausedBy, FormatTime(ep.PausedAt), ep.PausedReason, pr.set.PausedAfterMs, held)}
		a := &store.Alert{ProjectID: ep.ProjectID, EndpointID: ep.ID, Kind: wire.AlertPausedLong, At: ap.now,
			DedupKey: "paused:" + strconv.FormatInt(ep.ID, 10) + ":" + strconv.FormatInt(ep.PausedAt, 10)}
		if err := e.raise(ctx, ap, a, b); err != nil {
			return err
		}
	}
	return nil
}

// checkWindow raises the exhausted-jobs and failure-rate alerts of the
// project's last closed window, once the history has rolled it up.
func (e *Engine) checkWindow(ctx context.Context, ap *alertPass, pr *alertProject, projectID int64, eps []*store.Endpoint) error {
	win := pr.set.WindowMs
	to := ap.now - ap.now%win
	if ap.now-to < historySettleMs {
		to -= win
	}
	from := to - win
	names := map[int64]string{}
	for _, ep := range eps {
		names[ep.ID] = ep.Name
	}
	failed, err := ap.q.JobsFailed(ctx, &store.JobsFailedParams{ProjectID: projectID, State: wire.JobExhausted, FinishedFrom: from, FinishedBefore: to,
		Limit: wire.FailureScanBound})
	if err != nil {
		return err
	}
	exhausted := map[int64]int64{}
	for _, j := range failed {
		exhausted[j.EndpointID]++
	}
	for id, n := range exhausted {
		b := &wire.Alert{Kind: wire.AlertJobsExhausted, Endpoint: names[id], At: FormatTime(to), Count: n,
			Summary: fmt.Sprintf("%d jobs exhausted on endpoint %s", n, names[id]),
			Detail:  fmt.Sprintf("%d jobs of endpoint %s used every attempt between %s and %s", n, names[id], FormatTime(from), FormatTime(to))}
		if err := e.raise(ctx, ap, &store.Alert{ProjectID: projectID, EndpointID: id, Kind: wire.AlertJobsExhausted, At: to, Count: n,
			DedupKey: "exhausted:" + strconv.FormatInt(id, 10) + ":" + strconv.FormatInt(from, 10)}, b); err != nil {
			return err
		}
	}
	return e.checkFailureRate(ctx, ap, pr, projectID, names, from, to)
}

func (e *Engine) checkFailureRate(ctx context.Context, ap *alertPass, pr *alertProject, projectID int64, names map[int64]string, from, to int64) error {
	points, err := ap.q.HistoryList(ctx, &store.HistoryListParams{ProjectID: projectID, From: from, To: to})
	if err != nil {
		return err
	}
	type sum struct{ done, failed int64 }
	sums := map[int64]*sum{}
	for _, pt := range points {
		s := sums[pt.EndpointID]
		if s == nil {
			s = &sum{}
			sums[pt.EndpointID] = s
		}
		s.done += pt.Succeeded + pt.Failed + pt.TimedOut
		s.failed += pt.Failed + pt.TimedOut
	}
	for id, s := range sums {
		if s.done < pr.set.FailureRateMin || s.failed*100 < pr.set.FailureRatePercent*s.done {
			continue
		}
		pct := s.failed * 100 / s.done
		b := &wire.Alert{Kind: wire.AlertFailureRate, Endpoint: names[id], At: FormatTime(to), Count: s.failed,
			Summary: fmt.Sprintf("%d%% of attempts failed on endpoint %s", pct, names[id]),
			Detail: fmt.Sprintf("%d of %d attempts of endpoint %s that finished between %s and %s failed or timed out (%d%%; failureRatePercent %d, failureRateMin %d)",
				s.failed, s.done, names[id], FormatTime(from), FormatTime(to), pct, pr.set.FailureRatePercent, pr.set.FailureRateMin),
			Facts: map[string]int64{"attempts": s.done, "failed": s.failed, "percent": pct}}
		if err := e.raise(ctx, ap, &store.Alert{ProjectID: projectID, EndpointID: id, Kind: wire.AlertFailureRate, At: to, Count: s.failed,
			DedupKey: "failrate:" + strconv.FormatInt(id, 10) + ":" + strconv.FormatInt(from, 10)}, b); err != nil {
			return err
		}
	}
	return nil
}
