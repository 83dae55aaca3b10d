package bench

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/getratchet/ratchet/wire"
)

// OutageResult is one variant's run of mode outage: what was staged, what
// the provider saw and what became of the jobs.
type OutageResult struct {
	Variant     string
	Plan        providerPlan
	Jobs, Nodes int
	EnqueueTook time.Duration // from the provider's start to the last enqueue's answer
	TimedOut    bool          // the time limit came before every job finished
	Circuit     []circuitChange
	// The jobs, as the API lists them at the end.
	Succeeded, Failed, Exhausted, Unfinished int
	Attempts, MostAttempts                   int64
	ExhaustedBy                              map[string]int // by the last attempt's classification
	// Attempts without an HTTP answer, read from the jobs whose attempts
	// outnumber the provider's requests: never sent (they waited in the
	// dispatcher's claim-ahead buffer past their lease's margin), and
	// sent without an answer (refused or failed connections); with
	// UnseenUnread jobs of that kind left unread (over 2000).
	NotSent, NoAnswer, UnseenUnread int
	OutageFigures
	requests []providerRequest
	attempts map[int64]int64 // by job id
}

// addJob counts one job of the final list.
func (r *OutageResult) addJob(state wire.JobState, attempts int64, last string) {
	switch state {
	case wire.JobSucceeded:
		r.Succeeded++
	case wire.JobFailed:
		r.Failed++
	case wire.JobExhausted:
		r.Exhausted++
		if r.ExhaustedBy == nil {
			r.ExhaustedBy = map[string]int{}
		}
		r.ExhaustedBy[last]++
	default:
		r.Unfinished++
	}
	r.Attempts += attempts
	r.MostAttempts = max(r.MostAttempts, attempts)
}

// OutageFigures are what the provider saw, counted from its records.
type OutageFigures struct {
	Requests     int // every request it received
	DuringOutage int // before the first recovery
	// After the first recovery: every request, those refused with 429,
	// those answered 503 in a later outage (flapping) and those answered
	// 200.
	AfterRecovery, Refused, DownAgain, Successes int
	RefusedShare                                 float64 // Refused / AfterRecovery
	// The busiest second after the recovery (1 s buckets from the
	// provider's start): its number, its requests and their ratio to the
	// capacity.
	BusiestSecond, Busiest int
	BusiestRatio           float64
	// Backlog is the jobs not yet succeeded at the recovery; Ideal how
	// long the provider needs for them at its capacity; Drain the time
	// from the recovery to the last 200, and DrainRatio Drain / Ideal.
	Backlog      int
	Drain, Ideal time.Duration
	DrainRatio   float64
	Seconds      []SecondCount // per second from the provider's start
}

// SecondCount is one second at the provider: requests that arrived in it,
// and those answered other than 200 (429 when up, 503 when down).
type SecondCount struct{ Arrivals, NotOK int }

// outageFigures counts the provider's records under plan for a run of
// jobs jobs.
func outageFigures(plan providerPlan, reqs []providerRequest, jobs int) OutageFigures {
	f := OutageFigures{Requests: len(reqs), Backlog: jobs}
	var lastOK time.Duration
	for _, q := range reqs {
		sec := int(q.at / time.Second)
		for len(f.Seconds) <= sec {
			f.Seconds = append(f.Seconds, SecondCount{})
		}
		f.Seconds[sec].Arrivals++
		if q.status != http.StatusOK {
			f.Seconds[sec].NotOK++
		}
		if q.at < plan.Outage {
			f.DuringOutage++
			if q.status == http.StatusOK {
				f.Backlog--
			}
			continue
		}
		f.AfterRecovery++
		switch q.status {
		case http.StatusOK:
			f.Successes++
			lastOK = max(lastOK, q.at)
		case http.StatusTooManyRequests:
			f.Refused++
		default:
			f.DownAgain++
		}
	}
	if f.AfterRecovery > 0 {
		f.RefusedShare = float64(f.Refused) / float64(f.AfterRecovery)
	}
	first := int((plan.Outage + time.Second - 1) / time.Second) // the first whole second after the recovery
	for s := first; s < len(f.Seconds); s++ {
		if f.Seconds[s].Arrivals > f.Busiest {
			f.BusiestSecond, f.Busiest = s, f.Seconds[s].Arrivals
		}
	}
	f.BusiestRatio = float64(f.Busiest) / float64(plan.Capacity)
	f.Ideal = plan.idealDrain(f.Backlog)
	if f.Successes > 0 {
		f.Drain = lastOK - plan.Outage
	}
	if f.Ideal > 0 {
		f.DrainRatio = float64(f.Drain) / float64(f.Ideal)
	}
	return f
}

// describe says what the variant's provider does.
func (p providerPlan) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "down for %s ", p.Outage)
	switch p.Kind {
	case outage503RetryAfter:
		fmt.Fprintf(&b, "answering 503 with Retry-After: %d", int(p.RetryAfter/time.Second))
	case outage503:
		b.WriteString("answering 503 (no Retry-After)")
	case outageRefused:
		b.WriteString("refusing connections (its listener closed; the same port listens again when it is up)")
	}
	fmt.Fprintf(&b, "; then up at %d requests/s (token bucket, burst %d), above it ", p.Capacity, p.Capacity)
	switch p.Headers {
	case headersNone:
		b.WriteString("a bare 429, and no rate-limit header on any answer")
	case headersIETF:
		b.WriteString("429 with Retry-After: 1; every answer carries RateLimit-Limit, -Remaining, -Reset and the IETF RateLimit and RateLimit-Policy fields")
	default:
		b.WriteString("429 with Retry-After: 1; every answer carries RateLimit-Limit, -Remaining and -Reset")
	}
	if p.Flap > 0 {
		fmt.Fprintf(&b, "; flapping: down again for %s after every %s up, the same way", p.Flap, p.Flap)
	}
	return b.String()
}

// print writes the variant's figures, histogram and verdicts.
func (r *OutageResult) print(w io.Writer) {
	f := &r.OutageFigures
	fmt.Fprintf(w, "\nvariant %s: provider %s\n", r.Variant, r.Plan.describe())
	fmt.Fprintf(w, "jobs:       %d enqueued within %s of the outage's start; %d succeeded, %d failed, %d exhausted%s, %d unfinished%s\n",
		r.Jobs, round(r.EnqueueTook), r.Succeeded, r.Failed, r.Exhausted, exhaustedBy(r.ExhaustedBy), r.Unfinished, timedOut(r.TimedOut))
	fmt.Fprintf(w, "attempts:   %d recorded by Ratchet (mean %.2f per job, max %d); the provider received %d requests; %s\n",
		r.Attempts, float64(r.Attempts)/float64(max(r.Jobs, 1)), r.MostAttempts, f.Requests, unseenText(r, f))
	fmt.Fprintf(w, "outage:     %d requests during the first outage\n", f.DuringOutage)
	fmt.Fprintf(w, "recovery:   %d requests after the recovery, %d refused with 429 (%.1f %%), %d answered 503 in later outages, %d answered 200\n",
		f.AfterRecovery, f.Refused, 100*f.RefusedShare, f.DownAgain, f.Successes)
	fmt.Fprintf(w, "busiest:    %d requests in second %d = %.2f × the capacity of %d/s\n", f.Busiest, f.BusiestSecond, f.BusiestRatio, r.Plan.Capacity)
	fmt.Fprintf(w, "drain:      last 200 %s after the recovery = %.2f × backlog ÷ capacity (%d jobs ÷ %d/s = %s)\n",
		round(f.Drain), f.DrainRatio, f.Backlog, r.Plan.Capacity, round(f.Ideal))
	fmt.Fprintf(w, "circuit:    %s (sampled every 200 ms through GET /v1/endpoints/%s)\n", circuitText(r.Circuit), outageEndpoint)
	printSeconds(w, f.Seconds, r.Plan)
	fmt.Fprintf(w, "verdict:    refused ≤ 10 %%: %s (%.1f %%); busiest ≤ 2 × capacity: %s (%.2f ×); drain ≤ 1.3 × backlog ÷ capacity: %s (%.2f ×%s); exhausted = 0: %s (%d)\n",
		met(f.RefusedShare <= 0.10), 100*f.RefusedShare, met(f.BusiestRatio <= 2), f.BusiestRatio,
		met(!r.TimedOut && r.Unfinished == 0 && f.DrainRatio <= 1.3), f.DrainRatio, timedOut(r.TimedOut), met(r.Exhausted == 0), r.Exhausted)
}

// printSeconds prints the per-second histogram, ten seconds a row, each
// second as arrivals/not-OK; a * marks the seconds the provider was down
// (at their start).
func printSeconds(w io.Writer, secs []SecondCount, plan providerPlan) {
	fmt.Fprintf(w, "per second: requests/answered not 200, from the provider's start, 10 s a row; * = down at the second's start\n")
	for row := 0; row < len(secs); row += 10 {
		var b strings.Builder
		fmt.Fprintf(&b, "  %4d s ", row)
		for s := row; s < min(row+10, len(secs)); s++ {
			mark := " "
			if !plan.up(time.Duration(s) * time.Second) {
				mark = "*"
			}
			fmt.Fprintf(&b, " %9s", fmt.Sprintf("%d/%d%s", secs[s].Arrivals, secs[s].NotOK, mark))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// unseenText says what became of the attempts the provider did not see.
func unseenText(r *OutageResult, f *OutageFigures) string {
	n := r.Attempts - int64(f.Requests)
	if n == 0 {
		return "every attempt reached it"
	}
	s := fmt.Sprintf("of the %d attempts it did not see, %d had no answer (connection refused or failed) and %d were never sent (waited in the dispatcher's claim-ahead buffer past their lease's margin)", n, r.NoAnswer, r.NotSent)
	if r.UnseenUnread > 0 {
		s += fmt.Sprintf("; %d more jobs with unseen attempts not read", r.UnseenUnread)
	}
	return s
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

func timedOut(t bool) string {
	if t {
		return " — the time limit came first"
	}
	return ""
}

func exhaustedBy(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		name := k
		if name == "" {
			name = "(none)"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, m[k]))
	}
	return " (last attempt: " + strings.Join(parts, ", ") + ")"
}

func circuitText(cs []circuitChange) string {
	if len(cs) == 0 {
		return "stayed closed"
	}
	var parts []string
	for _, c := range cs {
		if c.From == c.To {
			parts = append(parts, fmt.Sprintf("opened again at %.1f s", c.At.Seconds()))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s→%s at %.1f s", c.From, c.To, c.At.Seconds()))
	}
	return fmt.Sprintf("%d changes: %s", len(cs), strings.Join(parts, ", "))
}
