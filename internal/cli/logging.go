package cli

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Log formats of --log-format.
const (
	logText = "text" // key=value lines (slog's text handler), the default
	logJSON = "json" // one JSON object a line, for log shippers
)

// logFlags are --log-level and --log-format.
type logFlags struct{ level, format *string }

func addLogFlags(f *flagSet, env *Env) logFlags {
	return logFlags{
		level:  f.String("log-level", envOr(env, "RATCHET_LOG_LEVEL", "info"), "debug, info, warn or error (RATCHET_LOG_LEVEL)"),
		format: f.String("log-format", envOr(env, "RATCHET_LOG_FORMAT", logText), "text (key=value lines) or json (one object a line) (RATCHET_LOG_FORMAT)"),
	}
}

// logger builds the logger the flags ask for, writing to w; a bad value is
// reported on f and the logger returned is then a text one at info.
func (lf logFlags) logger(f *flagSet, w io.Writer) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*lf.level)); err != nil {
		f.fail("log-level", *lf.level, "must be debug, info, warn or error")
	}
	format, err := parseLogFormat(*lf.format)
	if err != nil {
		f.fail("log-format", *lf.format, err.Error())
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == logJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// parseLogFormat reads --log-format: text or json, in any case, spaces
// around ignored.
func parseLogFormat(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case logText, logJSON:
		return v, nil
	}
	return "", fmt.Errorf("must be %s or %s", logJSON, logText)
}
