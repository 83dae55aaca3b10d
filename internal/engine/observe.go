package engine

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Workers and history (GET /v1/workers, GET /v1/history).
//
// A node notes in memory when it saw each worker claim, heartbeat and
// report, and writes what it noted at most once per second (FlushWorkers,
// from Run): the claim path gains no write. History is rolled up once per
// closed minute from the attempts of that minute (RollUpHistory, from Run
// and before every prune, so no attempt is pruned before its minute is
// counted).

const (
	minuteMs = 60_000
	// workerTTL: workers unseen this long are dropped.
	workerTTL = 24 * time.Hour
	// historyGraceMs: a minute is rolled up this long after it ends, so
	// that claims and reports stamped in its last moments have committed.
	historyGraceMs = 5_000
	// historyChunkMinutes bounds one roll-up transaction when catching up.
	historyChunkMinutes = 60
	// maxWorkersListed bounds GET /v1/workers.
	maxWorkersListed = 1000
	// maxWorkersNoted bounds the workers one node notes between two
	// flushes (one second): a key that claims under a new workerId every
	// call cannot grow the map, nor the rows written, without end.
	maxWorkersNoted = 10_000
)

type workerKey struct {
	projectID int64
	workerID  string
}

// workerSeenMap holds the times one node saw workers since its last flush.
type workerSeenMap struct {
	// flushing is held for a whole flush, write included, so a flush
	// waits for one in progress: Workers flushes and then reads, and
	// must not read before the background flush that took its notes
	// has committed them (it read an empty list under load).
	flushing sync.Mutex
	mu       sync.Mutex
	m        map[workerKey]*store.WorkerSeen
}

type seenKind int

const (
	seenClaim seenKind = iota
	seenHeartbeat
	seenReport
)

// noteWorker records, in memory, that a worker was seen at ms.
func (e *Engine) noteWorker(projectID int64, workerID string, kind seenKind, ms int64) {
	if workerID == "" {
		return
	}
	s := &e.workers
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[workerKey]*store.WorkerSeen{}
	}
	k := workerKey{projectID, workerID}
	w := s.m[k]
	if w == nil {
		if len(s.m) >= maxWorkersNoted {
			return
		}
		w = &store.WorkerSeen{ProjectID: projectID, WorkerID: workerID, FirstAt: ms}
		s.m[k] = w
	}
	w.FirstAt = min(w.FirstAt, ms)
	switch kind {
	case seenClaim:
		w.ClaimAt = max(w.ClaimAt, ms)
	case seenHeartbeat:
		w.HeartbeatAt = max(w.HeartbeatAt, ms)
	case seenReport:
		w.ReportAt = max(w.ReportAt, ms)
	}
}

// FlushWorkers writes what this node saw of workers since the last flush
// in one transaction. Run calls it every second.
func (e *Engine) FlushWorkers(ctx context.Context) error {
	s := &e.workers
	s.flushing.Lock()
	defer s.flushing.Unlock()
	s.mu.Lock()
	m := s.m
	s.m = nil
	s.mu.Unlock()
	if len(m) == 0 {
		return nil
	}
	ws := make([]store.WorkerSeen, 0, len(m))
	for _, w := range m {
		ws = append(ws, *w)
	}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		return q.WorkersTouch(ctx, &store.WorkersTouchParams{Workers: ws})
	})
	if err != nil {
		// Put the times back for the next flush; newer notes win.
		for _, w := range ws {
			if w.ClaimAt > 0 {
				e.noteWorker(w.ProjectID, w.WorkerID, seenClaim, w.ClaimAt)
			}
			if w.HeartbeatAt > 0 {
				e.noteWorker(w.ProjectID, w.WorkerID, seenHeartbeat, w.HeartbeatAt)
			}
			if w.ReportAt > 0 {
				e.noteWorker(w.ProjectID, w.WorkerID, seenReport, w.ReportAt)
			}
		}
		return storeErr(err, "workers")
	}
	return nil
}

// Workers lists the project's workers seen in the last 24 hours, latest
// activity first, with the running jobs each holds. This node's notes are
// written first, so a worker seen here a moment ago is listed.
func (e *Engine) Workers(ctx context.Context, p *Principal) ([]store.Worker, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	if err := e.FlushWorkers(ctx); err != nil {
		return nil, err
	}
	var out []store.Worker
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		out, err = q.WorkerList(ctx, &store.WorkerListParams{ProjectID: p.ProjectID, SeenSince: e.nowMs() - workerTTL.Milliseconds(),
			Limit: maxWorkersListed, JobsPerWorker: wire.WorkerJobsShown})
		return err
	})
	return out, storeErr(err, "workers")
}

// HistoryResult is the roll-ups of [From, To), with each endpoint's
// detail (history_detail.go).
type HistoryResult struct {
	From, To  int64
	Endpoints []string             // the endpoints asked about, by name
	Points    []store.HistoryPoint // by endpoint name, then minute
	Details   []EndpointDetail     // by endpoint, in the order of Endpoints
}

// History reads the project's per-minute roll-ups of the last hours
// (1–48), of one endpoint or every one.
func (e *Engine) History(ctx context.Context, p *Principal, endpoint string, hours int) (*HistoryResult, error) {
	if hours < wire.HistoryMinHours || hours > wire.HistoryMaxHours {
		return nil, invalidField("hours", strconv.Itoa(hours), "must be an integer from "+strconv.Itoa(wire.HistoryMinHours)+" through "+strconv.Itoa(wire.HistoryMaxHours))
	}
	return e.HistoryMinutes(ctx, p, endpoint, hours*60)
}

// HistoryMinutes reads the project's per-minute roll-ups of the last
// minutes (15 through 48 hours' worth), of one endpoint or every one, and
// each endpoint's detail over the same range: failures by class, latency
// and the markers of pauses and circuit changes.
func (e *Engine) HistoryMinutes(ctx context.Context, p *Principal, endpoint string, minutes int) (*HistoryResult, error) {
	// Any key may read it, as the overview.
	if minutes < wire.HistoryMinMinutes || minutes > wire.HistoryMaxMinutes {
		return nil, invalidField("minutes", strconv.Itoa(minutes), "must be an integer from "+strconv.Itoa(wire.HistoryMinMinutes)+" through "+strconv.Itoa(wire.HistoryMaxMinutes))
	}
	to := e.nowMs() / minuteMs * minuteMs
	res := &HistoryResult{From: to - int64(minutes)*minuteMs, To: to}
	err := e.st.Read(ctx, func(q store.Queries) error {
		params := &store.HistoryListParams{ProjectID: p.ProjectID, From: res.From, To: res.To}
		var eps []store.Endpoint
		if endpoint != "" {
			ep, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: endpoint})
			if err != nil {
				return storeErr(err, "endpoint "+strconv.Quote(endpoint))
			}
			params.EndpointID = ep.ID
			eps = []store.Endpoint{*ep}
		} else {
			var err error
			if eps, err = q.EndpointList(ctx, p.ProjectID); err != nil {
				return err
			}
		}
		for i := range eps {
			res.Endpoints = append(res.Endpoints, eps[i].Name)
			d, err := historyDetail(ctx, q, p.ProjectID, &eps[i], res.From, res.To)
			if err != nil {
				return err
			}
			res.Details = append(res.Details, d)
		}
		var err error
		res.Points, err = q.HistoryList(ctx, params)
		return err
	})
	if err != nil {
		return nil, storeErr(err, "history")
	}
	return res, nil
}

// RollUpHistory rolls up every closed minute not rolled up yet, at most
// the history retention back, and deletes roll-ups past the retention and
// workers unseen for 24 hours. Any node may call it at any time, and a
// node that was down catches up. It returns the roll-up rows written.
//
// The minutes are computed in a Read, which on SQLite does not hold the
// single writer while it reads the attempts (about 0.4 s per 40,000), and
// stored in a short Tx that locks the cursor row and writes only if the
// cursor is still where the Read found it: on PostgreSQL two nodes may
// compute the same minutes, and one of them stores them.
func (e *Engine) RollUpHistory(ctx context.Context) (int64, error) {
	var total int64
	for {
		var from, to, closed, keep, now int64
		var points []store.HistoryPoint
		err := e.st.Read(ctx, func(q store.Queries) (err error) {
			if now, err = e.txNow(ctx, q); err != nil {
				return err
			}
			closed = (now - historyGraceMs) / minuteMs * minuteMs
			next, err := q.HistoryCursorGet(ctx)
			if err != nil {
				return err
			}
			keep = (closed - e.cfg.HistoryRetention.Milliseconds()) / minuteMs * minuteMs
			from = max(next, keep)
			if from >= closed {
				return nil
			}
			to = min(closed, from+historyChunkMinutes*minuteMs)
			points, err = q.HistoryCompute(ctx, &store.HistoryComputeParams{From: from, To: to})
			return err
		})
		if err != nil {
			return total, storeErr(err, "history roll-up")
		}
		if from >= closed {
			e.nextRollUp.Store(closed + minuteMs + historyGraceMs)
			return total, nil
		}
		var n int64
		err = e.st.Tx(ctx, func(q store.Queries) error {
			n = 0
			next, err := q.HistoryCursorGet(ctx)
			if err != nil {
				return err
			}
			if max(next, keep) != from {
				return nil // another node moved the cursor: read again
			}
			if n, err = q.HistoryInsert(ctx, points); err != nil {
				return err
			}
			if err := q.HistoryCursorSet(ctx, to); err != nil {
				return err
			}
			if to < closed {
				return nil
			}
			if _, err := q.HistoryPrune(ctx, &store.HistoryPruneParams{Before: keep}); err != nil {
				return err
			}
			_, err = q.WorkersPrune(ctx, &store.WorkersPruneParams{SeenBefore: now - workerTTL.Milliseconds()})
			return err
		})
		if err != nil {
			return total, storeErr(err, "history roll-up")
		}
		total += n
	}
}

// maybeRollUp runs RollUpHistory when a minute may have closed since the
// last one; between minutes it costs a comparison.
func (e *Engine) maybeRollUp(ctx context.Context) {
	if e.nowMs() < e.nextRollUp.Load() {
		return
	}
	if n, err := e.RollUpHistory(ctx); err != nil && ctx.Err() == nil {
		// Try again in a while rather than at every tick of Run.
		e.nextRollUp.Store(e.nowMs() + 10_000)
		e.log.Warn("history roll-up failed", "err", err)
	} else if n > 0 {
		e.log.Debug("rolled up history", "rows", n)
	}
}
