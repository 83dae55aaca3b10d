package engine

import (
	"slices"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/wire"
)

// alertFact is one line of an alert's arithmetic, as Slack fields and a
// Teams fact set show it.
type alertFact struct{ name, value string }

// alertFacts are the numbers an on-call person needs, those that apply.
func alertFacts(a *wire.Alert) []alertFact {
	var out []alertFact
	add := func(name, value string) { out = append(out, alertFact{name, value}) }
	if a.Endpoint != "" {
		add("Endpoint", a.Endpoint)
	}
	if a.Threshold > 0 && (a.Kind == wire.AlertCircuitOpened || a.Failures > 0) {
		add("Failures counted", strconv.FormatInt(a.Failures, 10)+" of threshold "+strconv.FormatInt(a.Threshold, 10))
	}
	if a.OpenedAt != nil {
		add("Opened at", *a.OpenedAt)
	}
	if a.NextProbeAt != nil {
		add("Next probe at", *a.NextProbeAt)
	}
	if a.HeldJobs > 0 || a.Kind == wire.AlertCircuitOpened || a.Kind == wire.AlertPausedLong {
		add("Jobs held", strconv.FormatInt(a.HeldJobs, 10))
	}
	if a.Count > 0 {
		add(countName(a.Kind), strconv.FormatInt(a.Count, 10))
	}
	if a.DrainPerMinute > 0 {
		add("Drain pace", strconv.FormatInt(a.DrainPerMinute, 10)+" attempts / minute")
	}
	if a.DrainEndsAt != nil {
		add("Drain ends about", *a.DrainEndsAt)
	}
	for _, k := range sortedKeys(a.Facts) {
		add(k, strconv.FormatInt(a.Facts[k], 10))
	}
	add("At", a.At)
	return out
}

func countName(k wire.AlertKind) string {
	switch k {
	case wire.AlertJobsExhausted:
		return "Jobs exhausted"
	case wire.AlertFailureRate:
		return "Attempts failed"
	case wire.AlertSuppressed:
		return "Alerts suppressed"
	}
	return "Count"
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// slackMessage is a Slack incoming-webhook body: text (the notification
// and the fallback) and blocks (a header, the sentence, the arithmetic as
// fields and the console link).
func slackMessage(a *wire.Alert) map[string]any {
	var lines []string
	var fields []map[string]any
	for _, f := range alertFacts(a) {
		lines = append(lines, f.name+": "+f.value)
		if len(fields) < 10 { // Slack takes at most 10 fields per section
			fields = append(fields, map[string]any{"type": "mrkdwn", "text": "*" + f.name + "*\n" + f.value})
		}
	}
	text := a.Summary + " (" + a.Project + ")\n" + a.Detail + "\n" + strings.Join(lines, "\n")
	blocks := []map[string]any{
		{"type": "header", "text": map[string]any{"type": "plain_text", "text": cutText(a.Summary, 150)}},
		{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": cutText(a.Detail, 3000)}},
		{"type": "section", "fields": fields},
	}
	if a.Link != "" {
		text += "\n" + a.Link
		blocks = append(blocks, map[string]any{"type": "actions", "elements": []map[string]any{
			{"type": "button", "text": map[string]any{"type": "plain_text", "text": "Open in Ratchet"}, "url": a.Link}}})
	}
	blocks = append(blocks, map[string]any{"type": "context", "elements": []map[string]any{
		{"type": "mrkdwn", "text": "Ratchet · project " + a.Project + " · alert " + strconv.FormatInt(a.ID, 10)}}})
	return map[string]any{"text": text, "blocks": blocks}
}

// teamsMessage is a Microsoft Teams incoming-webhook body: a message with
// one Adaptive Card (version 1.4), which the Workflows webhooks that
// replace Office 365 connectors take; a legacy MessageCard is not shown
// by them.
func teamsMessage(a *wire.Alert) map[string]any {
	var facts []map[string]any
	for _, f := range alertFacts(a) {
		facts = append(facts, map[string]any{"title": f.name, "value": f.value})
	}
	card := map[string]any{
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard", "version": "1.4",
		"body": []map[string]any{
			{"type": "TextBlock", "text": a.Summary, "weight": "Bolder", "size": "Medium", "wrap": true},
			{"type": "TextBlock", "text": a.Detail, "wrap": true},
			{"type": "FactSet", "facts": facts},
			{"type": "TextBlock", "text": "Ratchet · project " + a.Project + " · alert " + strconv.FormatInt(a.ID, 10), "isSubtle": true, "size": "Small", "wrap": true},
		},
	}
	if a.Link != "" {
		card["actions"] = []map[string]any{{"type": "Action.OpenUrl", "title": "Open in Ratchet", "url": a.Link}}
	}
	return map[string]any{"type": "message", "attachments": []map[string]any{
		{"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": nil, "content": card}}}
}
