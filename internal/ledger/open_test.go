package ledger

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OpenRun opens <output>/ledger/<tool>_<key>/<name>.jsonl and warns of an
// earlier file torn by a kill, saying what becomes of that item.
func TestOpenRun(t *testing.T) {
	out := t.TempDir()
	run := Run{Output: out, Tool: "tool", Config: map[string]int{"a": 1}, Name: "s1", Redo: "that item is done again"}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	l, key, err := OpenRun(run, log)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(out, "ledger", "tool_"+key, "s1.jsonl"); l.Path() != want {
		t.Errorf("path %s, want %s", l.Path(), want)
	}
	l.Close()
	f, _ := os.OpenFile(l.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"item":"x","sha`) // a kill mid-line
	f.Close()
	run.Name = "s2"
	l2, key2, err := OpenRun(run, log)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if key2 != key || !strings.Contains(buf.String(), "torn") || !strings.Contains(buf.String(), "that item is done again") {
		t.Errorf("key %s then %s; log %q", key, key2, buf.String())
	}
}

// A run whose name an earlier run's file already holds (the same stamp:
// the earlier run's metadata was removed and the run started again within
// the same second) writes name_2.jsonl, then name_3.jsonl, and reads the
// earlier files; before, it failed with "file exists".
func TestOpenRunSameName(t *testing.T) {
	out := t.TempDir()
	run := Run{Output: out, Tool: "tool", Config: map[string]int{"a": 1}, Name: "s1", Redo: "that item is done again"}
	log := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	var paths []string
	for i, state := range []State{Failed, Done, Done} {
		l, _, err := OpenRun(run, log)
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if i > 0 {
			want := Failed // the first run's
			if i == 2 {
				want = Done // the second run's
			}
			if e, ok := l.Lookup("x", "d"); !ok || e.State != want {
				t.Errorf("run %d reads x as %+v (%v), want %s", i+1, e, ok, want)
			}
		}
		if err := l.Record(Entry{Item: "x", Digest: "d", State: state}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Base(l.Path()))
		l.Close()
	}
	if strings.Join(paths, " ") != "s1.jsonl s1_2.jsonl s1_3.jsonl" {
		t.Errorf("files %q", paths)
	}
}
