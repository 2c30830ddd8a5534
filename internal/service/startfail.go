package service

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"

	"archivekit/internal/logging"
)

// ConfigFailed reports err, the configuration error that keeps the
// service name from starting, on w (the services give os.Stderr) in the
// format of the service's log (LOG_FORMAT: a JSON record off a terminal,
// a text line on one; an unknown format as auto), at CRITICAL, and
// returns ExitConfig. It was one plain line among JSON records, which a
// log shipper parsing them dropped: the one line saying why the unit
// does not start.
func ConfigFailed(w io.Writer, name string, err error) int {
	h, herr := logging.NewHandler(w, slog.LevelDebug, os.Getenv(EnvLogFormat))
	if herr != nil {
		h, _ = logging.NewHandler(w, slog.LevelDebug, logging.FormatAuto)
	}
	msg := strings.TrimPrefix(err.Error(), name+": configuration: ")
	slog.New(h).Log(context.Background(), logging.LevelCritical, "configuration error: the service does not start",
		"service", name, "error", msg, "exit_code", ExitConfig)
	return ExitConfig
}
