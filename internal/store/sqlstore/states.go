package sqlstore

import (
	"strings"

	"github.com/getratchet/ratchet/wire"
)

// finishedStates is the SQL list of the final job states,
// ('succeeded', 'failed', ...), read from wire.JobState.Finished so that
// JobsPrune prunes every final state the machine has and never a state a
// transition leaves. The states are constants of wire, never user input.
var finishedStates = sqlList(wire.JobStatesWhere(wire.JobState.Finished))

// sqlList writes values as a parenthesised SQL list of string literals.
func sqlList[T ~string](values []T) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + strings.ReplaceAll(string(v), "'", "''") + "'"
	}
	return "(" + strings.Join(q, ", ") + ")"
}
