// Package logging sets up the one log format shared by every archivekit
// command and service.
//
// Records are JSON lines (log/slog's JSONHandler) when the destination is not
// a terminal, which is the case in containers and CI, and readable coloured
// text (github.com/lmittmann/tint) when a person watches a terminal. Levels
// are given by name and accept Python's spellings (DEBUG, INFO, WARNING,
// ERROR, CRITICAL) as well as slog's (WARN), so operators can keep setting
// LOG_LEVEL=WARNING.
package logging

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"archivekit/internal/utf8name"

	"github.com/lmittmann/tint"
)

// LevelCritical is the level above ERROR, for failures that stop the program.
// slog has no such level; it is printed as "CRITICAL".
const LevelCritical = slog.LevelError + 4

// Output formats accepted by New.
const (
	// FormatAuto picks FormatText when the writer is a terminal and FormatJSON otherwise.
	FormatAuto = "auto"
	// FormatJSON writes one JSON object per line.
	FormatJSON = "json"
	// FormatText writes coloured, human-readable lines.
	FormatText = "text"
)

// Environment variables read by FromEnv.
const (
	// EnvLevel names the minimum level. Unset means INFO; set but empty is an error.
	EnvLevel = "LOG_LEVEL"
	// EnvFormat names the output format: auto (default), json or text.
	EnvFormat = "LOG_FORMAT"
)

// levelNames maps every accepted (upper-case) level name to its slog level.
var levelNames = map[string]slog.Level{
	"DEBUG":    slog.LevelDebug,
	"INFO":     slog.LevelInfo,
	"WARNING":  slog.LevelWarn,
	"WARN":     slog.LevelWarn,
	"ERROR":    slog.LevelError,
	"CRITICAL": LevelCritical,
	"FATAL":    LevelCritical,
}

// ParseLevel turns a level name into a slog level. Names are matched without
// regard to case or surrounding blanks: DEBUG, INFO, WARNING (or WARN), ERROR,
// CRITICAL (or FATAL). An empty or unknown name is an error that lists the
// accepted names.
func ParseLevel(name string) (slog.Level, error) {
	s := strings.ToUpper(strings.TrimSpace(name))
	if s == "" {
		return 0, errors.New("log level is empty: set it to one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
	}
	if l, ok := levelNames[s]; ok {
		return l, nil
	}
	return 0, fmt.Errorf("unknown log level %q: use one of DEBUG, INFO, WARNING, ERROR, CRITICAL", name)
}

// LevelName is the name a record of level l is printed with: DEBUG, INFO,
// WARN, ERROR or CRITICAL (levels between them print as slog does, e.g. INFO+2).
func LevelName(l slog.Level) string {
	if l >= LevelCritical {
		if l == LevelCritical {
			return "CRITICAL"
		}
		return fmt.Sprintf("CRITICAL+%d", int(l-LevelCritical))
	}
	return l.String()
}

// New returns a logger writing to w at the given minimum level (a name
// accepted by ParseLevel) in the given format (FormatAuto, FormatJSON or
// FormatText; "" means FormatAuto).
//
// The text format is coloured unless the NO_COLOR environment variable is set,
// TERM is dumb or w is not a terminal.
func New(w io.Writer, level string, format string) (*slog.Logger, error) {
	lvl, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	h, err := NewHandler(w, lvl, format)
	if err != nil {
		return nil, err
	}
	return slog.New(h), nil
}

// NewHandler is New for callers that already hold a parsed level or want to
// wrap the handler.
func NewHandler(w io.Writer, level slog.Leveler, format string) (slog.Handler, error) {
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "", FormatAuto:
		if IsTerminal(w) {
			return newText(w, level), nil
		}
		return newJSON(w, level), nil
	case FormatJSON:
		return newJSON(w, level), nil
	case FormatText:
		return newText(w, level), nil
	default:
		return nil, fmt.Errorf("unknown log format %q: use auto, json or text", format)
	}
}

// FromEnv builds a logger writing to w from LOG_LEVEL (unset: INFO; set but
// empty: error) and LOG_FORMAT (unset or empty: auto).
func FromEnv(w io.Writer) (*slog.Logger, error) {
	return FromLookup(w, os.LookupEnv)
}

// FromLookup is FromEnv with the environment lookup (os.LookupEnv's
// signature), which tells a variable set empty from one unset.
func FromLookup(w io.Writer, lookup func(string) (string, bool)) (*slog.Logger, error) {
	level, ok := lookup(EnvLevel)
	if !ok {
		level = "INFO"
	} else if strings.TrimSpace(level) == "" {
		return nil, fmt.Errorf("%s is set but empty: set it to one of DEBUG, INFO, WARNING, ERROR, CRITICAL, or unset it for INFO", EnvLevel)
	}
	format, _ := lookup(EnvFormat)
	lg, err := New(w, level, format)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", EnvLevel, EnvFormat, err)
	}
	return lg, nil
}

// Terminal is implemented by writers that wrap another one (a log sink that
// may be switched to a progress bar) to say whether their output reaches a
// terminal.
type Terminal interface {
	Terminal() bool
}

// IsTerminal reports whether w is an *os.File attached to a character device
// (a terminal), or a Terminal that says it reaches one. Pipes, regular files
// and in-memory buffers are not.
func IsTerminal(w io.Writer) bool {
	if t, ok := w.(Terminal); ok {
		return t.Terminal()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}

func newJSON(w io.Writer, level slog.Leveler) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.LevelKey && len(groups) == 0 {
				if l, ok := a.Value.Any().(slog.Level); ok {
					return slog.String(slog.LevelKey, LevelName(l))
				}
			}
			return escapeNames(a)
		},
	})
}

// escapeNames writes a string or error value that is not UTF-8 (a file
// name of a Windows zip, "\x8e\xe1dost.alto.xml") with \xNN for each
// stray byte (utf8name.Escape), as the tables and run metadata write it:
// JSON gave U+FFFD, and two files were one name in the log.
func escapeNames(a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); !utf8.ValidString(s) {
			return slog.String(a.Key, utf8name.Escape(s))
		}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			if s := err.Error(); !utf8.ValidString(s) {
				return slog.String(a.Key, utf8name.Escape(s))
			}
		}
	}
	return a
}

func newText(w io.Writer, level slog.Leveler) slog.Handler {
	// NO_COLOR (no-color.org) or a terminal that shows escape sequences
	// as text (TERM=dumb: Emacs's shell, some CI consoles).
	_, noColor := os.LookupEnv("NO_COLOR")
	noColor = noColor || os.Getenv("TERM") == "dumb"
	return tint.NewTextHandler(w, &tint.Options{
		Level:      level,
		TimeFormat: "15:04:05.000",
		NoColor:    noColor || !IsTerminal(w),
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.LevelKey && len(groups) == 0 {
				if l, ok := a.Value.Any().(slog.Level); ok && l >= LevelCritical {
					// Bright red, like tint's ERR, but spelled out.
					return tint.Attr(9, slog.String(slog.LevelKey, "CRT"))
				}
			}
			if a.Value.Kind() == slog.KindAny {
				if m, ok := mapText(a.Value.Any()); ok {
					return slog.String(a.Key, m)
				}
			}
			return a
		},
	})
}

// mapText writes a map with string keys as people read it, its keys
// sorted: {ok: 2221, unsupported_lang: 12}, where fmt would write Go's
// map[ok:2221 unsupported_lang:12]. Other values are not maps (false).
func mapText(v any) (string, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		return "", false
	}
	keys := make([]string, 0, rv.Len())
	for _, k := range rv.MapKeys() {
		keys = append(keys, k.String())
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %v", k, rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())))
	}
	return "{" + strings.Join(parts, ", ") + "}", true
}
