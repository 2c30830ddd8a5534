package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
)

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    slog.Level
		wantErr string
	}{
		{"DEBUG", slog.LevelDebug, ""},
		{"debug", slog.LevelDebug, ""},
		{"INFO", slog.LevelInfo, ""},
		{" Info ", slog.LevelInfo, ""},
		{"WARNING", slog.LevelWarn, ""},
		{"WARN", slog.LevelWarn, ""},
		{"warning", slog.LevelWarn, ""},
		{"ERROR", slog.LevelError, ""},
		{"CRITICAL", LevelCritical, ""},
		{"FATAL", LevelCritical, ""},
		{"", 0, "log level is empty"},
		{"   ", 0, "log level is empty"},
		{"VERBOSE", 0, `unknown log level "VERBOSE"`},
		{"10", 0, `unknown log level "10"`},
	}
	for _, tt := range tests {
		got, err := ParseLevel(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseLevel(%q) error = %v, want containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// records decodes JSON lines and fails the test on any line that is not JSON.
func records(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("line is not JSON: %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestNewJSONFiltersByLevel(t *testing.T) {
	tests := []struct {
		level string
		want  []string // levels of the records that appear
	}{
		{"DEBUG", []string{"DEBUG", "INFO", "WARN", "ERROR", "CRITICAL"}},
		{"INFO", []string{"INFO", "WARN", "ERROR", "CRITICAL"}},
		{"WARNING", []string{"WARN", "ERROR", "CRITICAL"}},
		{"ERROR", []string{"ERROR", "CRITICAL"}},
		{"CRITICAL", []string{"CRITICAL"}},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		lg, err := New(&buf, tt.level, FormatJSON)
		if err != nil {
			t.Fatal(err)
		}
		lg.Debug("d")
		lg.Info("i", "path", "/x")
		lg.Warn("w")
		lg.Error("e")
		lg.Log(context.Background(), LevelCritical, "c")
		var got []string
		for _, r := range records(t, buf.Bytes()) {
			got = append(got, r["level"].(string))
			if _, ok := r["time"]; !ok {
				t.Errorf("record without time: %v", r)
			}
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("level %s: got records %v, want %v", tt.level, got, tt.want)
		}
	}
}

func TestNewAutoIsJSONForNonTerminal(t *testing.T) {
	var buf bytes.Buffer
	lg, err := New(&buf, "INFO", "")
	if err != nil {
		t.Fatal(err)
	}
	lg.Info("hello", "status", 200)
	r := records(t, buf.Bytes())
	if len(r) != 1 || r[0]["msg"] != "hello" || r[0]["status"] != float64(200) {
		t.Fatalf("got %v", r)
	}
}

func TestNewTextIsReadable(t *testing.T) {
	var buf bytes.Buffer
	lg, err := New(&buf, "INFO", FormatText)
	if err != nil {
		t.Fatal(err)
	}
	lg.Info("request", "status", 200)
	lg.Log(context.Background(), LevelCritical, "boom")
	out := buf.String()
	if strings.HasPrefix(out, "{") || !strings.Contains(out, "INF request status=200") || !strings.Contains(out, "CRT boom") {
		t.Fatalf("text output not as expected:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour codes written to a non-terminal:\n%q", out)
	}
}

// Maps are written as people read them on a terminal, keys sorted;
// JSON lines keep them as objects.
func TestTextMaps(t *testing.T) {
	type lang string
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"counts", map[string]int{"unsupported_lang": 12, "ok": 2221}, `segments="{ok: 2221, unsupported_lang: 12}"`},
		{"empty", map[string]int{}, `segments={}`},
		{"named key type", map[lang]float64{"de": 0.5}, `segments="{de: 0.5}"`},
		{"not a string key", map[int]int{1: 2}, `segments=map[1:2]`},
		{"a list stays", []string{"a", "b"}, `segments="[a b]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			lg, err := New(&buf, "INFO", FormatText)
			if err != nil {
				t.Fatal(err)
			}
			lg.Info("run summary", "segments", tt.v)
			if out := buf.String(); !strings.Contains(out, "run summary "+tt.want+"\n") {
				t.Errorf("got %q, want ...%s", out, tt.want)
			}
		})
	}
	var buf bytes.Buffer
	lg, _ := New(&buf, "INFO", FormatJSON)
	lg.Info("run summary", "segments", map[string]int{"ok": 1})
	if !strings.Contains(buf.String(), `"segments":{"ok":1}`) {
		t.Errorf("JSON line %s", buf.String())
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := New(&bytes.Buffer{}, "INFO", "xml"); err == nil || !strings.Contains(err.Error(), `unknown log format "xml"`) {
		t.Errorf("format xml: err = %v", err)
	}
	if _, err := New(&bytes.Buffer{}, "", "json"); err == nil {
		t.Error("empty level accepted")
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		level   *string // nil: unset
		format  string
		info    bool // INFO record expected
		wantErr string
	}{
		{"unset is INFO", nil, "", true, ""},
		{"WARNING hides INFO", ptr("WARNING"), "", false, ""},
		{"DEBUG", ptr("DEBUG"), "json", true, ""},
		{"empty fails", ptr(""), "", false, "LOG_LEVEL is set but empty"},
		{"bad name fails", ptr("LOUD"), "", false, `unknown log level "LOUD"`},
		{"bad format fails", ptr("INFO"), "yaml", false, `unknown log format "yaml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.level == nil {
				unsetenv(t, EnvLevel)
			} else {
				t.Setenv(EnvLevel, *tt.level)
			}
			t.Setenv(EnvFormat, tt.format)
			var buf bytes.Buffer
			lg, err := FromEnv(&buf)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lg.Info("info-record")
			if got := strings.Contains(buf.String(), "info-record"); got != tt.info {
				t.Errorf("INFO record present = %v, want %v; output %q", got, tt.info, buf.String())
			}
		})
	}
}

func TestIsTerminal(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("buffer reported as terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("regular file reported as terminal")
	}
}

func ptr(s string) *string { return &s }

// unsetenv removes key for the duration of the test.
func unsetenv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "") // registers restoration
	os.Unsetenv(key)
}

// ttyBuffer is a buffer that says it reaches a terminal (Terminal).
type ttyBuffer struct{ bytes.Buffer }

func (*ttyBuffer) Terminal() bool { return true }

// TestColourOnTerminal: the text format is coloured on a terminal, and
// not under NO_COLOR or on a terminal that shows escape sequences as text
// (TERM=dumb).
func TestColourOnTerminal(t *testing.T) {
	for _, c := range []struct {
		env    map[string]string
		colour bool
	}{
		{map[string]string{"TERM": "xterm-256color"}, true},
		{map[string]string{"TERM": "dumb"}, false},
		{map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, false},
	} {
		unsetenv(t, "NO_COLOR")
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		var buf ttyBuffer
		lg, err := New(&buf, "INFO", FormatAuto)
		if err != nil {
			t.Fatal(err)
		}
		lg.Warn("disk nearly full")
		if got := strings.Contains(buf.String(), "\x1b["); got != c.colour || strings.HasPrefix(buf.String(), "{") {
			t.Errorf("%v: coloured %v, want %v: %q", c.env, got, c.colour, buf.String())
		}
	}
}

// TestJSONNamesNotUTF8: a message, string or error naming a file whose
// name is not UTF-8 is written with \xNN for each stray byte, as the
// tables write it (JSON gave U+FFFD: two files were one name).
func TestJSONNamesNotUTF8(t *testing.T) {
	var b bytes.Buffer
	log, err := New(&b, "INFO", FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	log.Warn("\x8e\xe1dost.alto.xml: batch summary", "file", "\x8a\xe1dost.alto.xml", "error", errors.New("open \x8e\xe1dost.alto.xml: denied"))
	got := b.String()
	for _, want := range []string{`"msg":"\\x8e\\xe1dost.alto.xml: batch summary"`, `"file":"\\x8a\\xe1dost.alto.xml"`, `"error":"open \\x8e\\xe1dost.alto.xml: denied"`} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\ufffd") {
		t.Errorf("log holds U+FFFD:\n%s", got)
	}
}
