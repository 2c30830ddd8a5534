package ledger

import (
	"bytes"
	"fmt"
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

// Two runs of one second: the second's stamp is the first's with "-2"
// (paradata.Claim), and its entries, read after the first's, replace
// those of the same rank. Before, "s1-2.jsonl" was read before
// "s1.jsonl" (its whole name sorts first), so a --resume took the first
// run's row.
func TestRunsOfOneSecondInOrder(t *testing.T) {
	out := t.TempDir()
	log := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	for _, name := range []string{"s1", "s1-2"} {
		run := Run{Output: out, Tool: "tool", Config: map[string]int{"a": 1}, Name: name, Redo: "again"}
		l, _, err := OpenRun(run, log)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Record(Entry{Item: "x", Digest: "d", State: Done, Data: []byte(`"` + name + `"`)}); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	l, _, err := OpenRun(Run{Output: out, Tool: "tool", Config: map[string]int{"a": 1}, Name: "s2", Redo: "again"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if e, _ := l.Lookup("x", "d"); string(e.Data) != `"s1-2"` {
		t.Errorf("x reads %s, want the last run's", e.Data)
	}
}

func TestSortRuns(t *testing.T) {
	got := []string{"d/s1-2.jsonl", "d/s1-10.jsonl", "d/s1_2.jsonl", "d/s1.jsonl", "d/s1-9.jsonl", "c/s9.jsonl", "d/s0.jsonl", "d/s1-10_2.jsonl"}
	sortRuns(got)
	if want := "c/s9.jsonl d/s0.jsonl d/s1.jsonl d/s1-2.jsonl d/s1-9.jsonl d/s1-10.jsonl d/s1-10_2.jsonl d/s1_2.jsonl"; strings.Join(got, " ") != want {
		t.Errorf("%q, want %s", got, want)
	}
}

// TestOpenRunOtherSettings: a resume with nothing recorded under its
// settings, while another configuration's ledger is in the folder, says
// so and names it; a resume with its own entries, and a run not resuming,
// do not.
func TestOpenRunOtherSettings(t *testing.T) {
	out := t.TempDir()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	first := Run{Output: out, Tool: "tool", Config: map[string]string{"url": "http://mt-a"}, Name: "s1"}
	l, key, err := OpenRun(first, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(Entry{Item: "a", Digest: "d", State: Done}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	for _, c := range []struct {
		run  Run
		warn bool
	}{
		{Run{Output: out, Tool: "tool", Config: map[string]string{"url": "http://mt-b"}, Name: "s2"}, false},
		{Run{Output: out, Tool: "tool", Config: map[string]string{"url": "http://mt-b"}, Name: "s3", Resume: true}, true},
		{Run{Output: out, Tool: "tool", Config: map[string]string{"url": "http://mt-a"}, Name: "s4", Resume: true}, false},
	} {
		buf.Reset()
		l, _, err := OpenRun(c.run, log)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		said := strings.Contains(buf.String(), "a run with other settings left a ledger here") && strings.Contains(buf.String(), "tool_"+key)
		if said != c.warn {
			t.Errorf("%s: warned %v, want %v: %s", c.run.Name, said, c.warn, buf.String())
		}
		// It says which setting differs, with both values.
		if differs := `url: \"http://mt-a\" there, \"http://mt-b\" now`; c.warn && !strings.Contains(buf.String(), differs) {
			t.Errorf("%s: the warning does not say %s: %s", c.run.Name, differs, buf.String())
		}
	}
}

// TestSettingsDiffer: the settings that differ between a ledger's run and
// this one are named with both values, nested settings by their dotted
// name, settings set on one side only as such, and at most maxDiffers.
func TestSettingsDiffer(t *testing.T) {
	type model struct {
		Name string `json:"name"`
		Size int    `json:"size,omitempty"`
	}
	type cfg struct {
		URL   string            `json:"url"`
		Model model             `json:"model"`
		Pairs map[string]string `json:"pairs,omitempty"`
	}
	many := map[string]string{}
	for i := range 9 {
		many[fmt.Sprint("p", i)] = "x"
	}
	for _, c := range []struct {
		name        string
		there, now  cfg
		want        []string
		wantMissing string
	}{
		{"same", cfg{URL: "a"}, cfg{URL: "a"}, []string{"the same settings under another ledger format"}, "url"},
		{"url", cfg{URL: "a"}, cfg{URL: "b"}, []string{`url: "a" there, "b" now`}, "model"},
		{"nested", cfg{Model: model{Name: "v4"}}, cfg{Model: model{Name: "v4", Size: 384}}, []string{"model.size: not set there, 384 now"}, "model.name"},
		{"gone", cfg{Pairs: map[string]string{"de": "en"}}, cfg{}, []string{`pairs.de: "en" there, not set now`}, "url"},
		{"bounded", cfg{}, cfg{Pairs: many}, []string{"pairs.p0: not set there", "pairs.p5", "and 3 more"}, "pairs.p6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			l, _, err := OpenRun(Run{Output: out, Tool: "tool", Config: c.there, Name: "s1"}, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			dirs, _ := filepath.Glob(filepath.Join(out, Folder, "tool_*"))
			got := strings.Join(settingsDiffer(dirs, c.now), "\n")
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to say %q", got, w)
				}
			}
			if strings.Contains(got, c.wantMissing+":") {
				t.Errorf("got %q, naming %s, which is the same", got, c.wantMissing)
			}
		})
	}
}

// TestOpenRunForeignLedger: a --resume over a ledger file another user
// wrote (a world-writable results folder) says so, naming the file and its
// owner; its entries are taken as done (a team's shared folder is meant to
// share them). Without --resume, and over one's own files, nothing is said.
func TestOpenRunForeignLedger(t *testing.T) {
	out := t.TempDir()
	run := Run{Output: out, Tool: "tool", Config: map[string]int{"a": 1}, Name: "s1"}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	l, _, err := OpenRun(run, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(Entry{Item: "x", Digest: "d", State: Done}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	open := func(name string, resume bool) *Ledger {
		t.Helper()
		run.Name, run.Resume = name, resume
		l, _, err := OpenRun(run, log)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		return l
	}
	open("s2", true)
	if strings.Contains(buf.String(), "another user") {
		t.Errorf("one's own ledger said to be another user's: %s", buf.String())
	}
	// This process stands in for another user: the files are then not
	// its own (no root needed to give a file away).
	geteuid = func() int { return os.Geteuid() + 1 }
	defer func() { geteuid = os.Geteuid }()
	buf.Reset()
	open("s3", false)
	if strings.Contains(buf.String(), "another user") {
		t.Errorf("said without --resume: %s", buf.String())
	}
	l3 := open("s4", true)
	if _, ok := l3.Lookup("x", "d"); !ok || !strings.Contains(buf.String(), "another user") || !strings.Contains(buf.String(), filepath.Base(l.Path())) {
		t.Errorf("--resume over another user's ledger: entry kept %v; log %s", ok, buf.String())
	}
}
