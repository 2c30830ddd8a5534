package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// TestSummaryLevel: a document whose batches all came back clean logs its
// summary at INFO, so a clean run logs no warning at all; one with
// line-count mismatches logs it as a warning.
func TestSummaryLevel(t *testing.T) {
	src := testenv.Path(t, sampleALTO)
	for _, tc := range []struct {
		name      string
		cfg       translatortest.Config
		args      []string
		wantLevel string
	}{
		{"clean", translatortest.Config{}, []string{"--vocabulary", ""}, "INFO"},
		// The shipped configuration names a vocabulary a fresh install
		// does not have: a note, not a warning.
		{"clean, configured vocabulary absent", translatortest.Config{}, nil, "INFO"},
		{"line counts lost", translatortest.Config{Garbage: func(in string) string { return strings.ReplaceAll(in, "\n", " ") }}, []string{"--vocabulary", ""}, "WARN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := startAPI(t, tc.cfg)
			r := runCLI(t, newEnv(api), append([]string{src, "-o", t.TempDir(), "-src", "cs"}, tc.args...)...)
			var summary string
			warnings := 0
			for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
				var rec struct{ Level, Msg string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("not a JSON record: %q", line)
				}
				if strings.Contains(rec.Msg, ": batch summary") {
					summary = rec.Level
				}
				if rec.Level == "WARN" {
					warnings++
				}
			}
			if summary != tc.wantLevel {
				t.Errorf("summary logged at %q, want %q:\n%s", summary, tc.wantLevel, r.stderr)
			}
			if tc.wantLevel == "INFO" && warnings != 0 {
				t.Errorf("a clean run logged %d warnings:\n%s", warnings, r.stderr)
			}
		})
	}
}

// Segments the degeneracy guard left untranslated are counted in a warning
// that says why, with the guard's first reason (before: "failed the
// degeneracy guard" and nothing in the log, the CSV or the run metadata to
// say which rule). The stand-in answers every line with one word repeated
// before it (the line after, so that it does not answer one text for
// everything, which is refused before the guard).
func TestUntranslatedSaysWhy(t *testing.T) {
	api := startAPI(t, translatortest.Config{Garbage: func(in string) string {
		lines := strings.Split(in, "\n")
		for i := range lines {
			lines[i] = strings.Repeat("word ", 8) + lines[i]
		}
		return strings.Join(lines, "\n")
	}})
	for _, src := range []string{"../../testdata/realworld/v3_minimal.alto.xml", "../../internal/translate/hocr/testdata/real/ocropy_german_hocrtools-litver.hocr"} {
		r := runCLI(t, newEnv(api), src, "-o", t.TempDir(), "-src", "de", "--vocabulary", "")
		var why string
		for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			var rec struct{ Level, Msg string }
			if json.Unmarshal([]byte(line), &rec) == nil && strings.Contains(rec.Msg, "left untranslated") {
				why = rec.Msg
			}
		}
		if !strings.Contains(why, `reply rejected (repetition): "word" repeated 8 times in a row`) {
			t.Errorf("%s: the warning on untranslated segments does not give the guard's reason: %q\n%s", src, why, r.stderr)
		}
	}
}

// TestRunSummary: a run's log ends with its summary, as pageclass's does:
// the files translated and failed, the units, the log rows' statuses and
// the source languages, and the output folder.
func TestRunSummary(t *testing.T) {
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), testenv.Path(t, sampleALTO), "-o", out, "-src", "cs", "--vocabulary", "")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	type summary struct {
		Msg               string
		Files, Translated int
		DoneBefore        int `json:"done_before"`
		Failed            *int
		FailedBefore      int `json:"failed_before"`
		Untried           *int
		UnitsTranslated   int            `json:"units_translated"`
		Segments          map[string]int `json:"segments"`
		SourceLanguages   map[string]int `json:"source_languages"`
		Output            string
	}
	read := func(stderr string) (sum summary, found bool) {
		for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if strings.Contains(line, `"msg":"run summary"`) {
				if err := json.Unmarshal([]byte(line), &sum); err != nil {
					t.Fatal(err)
				}
				found = true
			}
		}
		return sum, found
	}
	sum, found := read(r.stderr)
	if !found || sum.Files != 1 || sum.Translated != 1 || sum.Failed == nil || *sum.Failed != 0 || sum.UnitsTranslated == 0 ||
		sum.Segments["ok"] == 0 || sum.SourceLanguages["cs"] == 0 || sum.Output != out {
		t.Errorf("run summary %+v (found %v), want 1 file translated, none failed, units, ok rows, cs and the output folder:\n%s", sum, found, r.stderr)
	}
	// Resumed: the file is an earlier run's, not translated again.
	r = runCLI(t, newEnv(api), testenv.Path(t, sampleALTO), "-o", out, "-src", "cs", "--vocabulary", "", "--resume")
	if sum, found := read(r.stderr); r.code != exitOK || !found || sum.Translated != 0 || sum.DoneBefore != 1 || sum.UnitsTranslated != 0 {
		t.Errorf("resumed: exit %d, run summary %+v (found %v), want none translated, 1 done before", r.code, sum, found)
	}
	// A folder of a document and a broken one: one translated, one failed,
	// none untried; resumed, both are an earlier run's.
	in, out2 := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "a.alto.xml"), readOrFatal(t, testenv.Path(t, sampleALTO)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "b.alto.xml"), []byte(`<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout>`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, newEnv(api), in, "-o", out2, "-src", "cs", "--vocabulary", "")
	if sum, found := read(r.stderr); !found || sum.Translated != 1 || sum.Failed == nil || *sum.Failed != 1 || sum.FailedBefore != 0 || sum.Untried == nil || *sum.Untried != 0 {
		t.Errorf("folder: run summary %+v (found %v), want 1 translated, 1 failed, none untried:\n%s", sum, found, r.stderr)
	}
	r = runCLI(t, newEnv(api), in, "-o", out2, "-src", "cs", "--vocabulary", "", "--resume")
	if sum, found := read(r.stderr); !found || sum.Translated != 0 || sum.DoneBefore != 1 || sum.Failed == nil || *sum.Failed != 0 || sum.FailedBefore != 1 {
		t.Errorf("folder resumed: run summary %+v (found %v), want 1 done and 1 failed before, none now:\n%s", sum, found, r.stderr)
	}
	// The kept failure is said once, at INFO, not as an error of this run.
	if strings.Contains(r.stderr, `"level":"ERROR","msg":"skipped"`) || !strings.Contains(r.stderr, `"level":"INFO","msg":"failed in an earlier run, kept (--retry-failed tries it again)"`) {
		t.Errorf("folder resumed: the kept failure is not said at INFO only:\n%s", r.stderr)
	}
}

// TestTerminalQuietClean: on a terminal the documents whose batches all
// came back clean are counted by the progress bar, not announced one line
// each (a run of a thousand files scrolled a thousand summary lines past
// its warnings); a document that needs attention still has its summary
// printed, as a warning; a warning that each file gives in the same words
// (a language the backend lacks, in every page of a book) is shown once,
// and the others counted at the end.
func TestTerminalQuietClean(t *testing.T) {
	src := testenv.Path(t, sampleALTO)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	for _, name := range []string{"a.alto.xml", "b.alto.xml", "c.alto.xml"} {
		if err := os.WriteFile(filepath.Join(in, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		cfg       translatortest.Config
		args      []string
		summaries int // -1: not counted
		want      []string
	}{
		{"clean", translatortest.Config{}, []string{"-src", "cs"}, 0, nil},
		{"line counts lost", translatortest.Config{Garbage: func(in string) string { return strings.ReplaceAll(in, "\n", " ") }}, []string{"-src", "cs"}, 3, nil},
		{"languages the backend lacks", translatortest.Config{Pairs: []string{"cs-en"}}, nil, -1,
			[]string{`a: blocks detected as "sk" left untouched`, `a: blocks detected as "ga" left untouched`, "4 more warnings repeated an earlier file's"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := startAPI(t, tc.cfg)
			tty, written := testenv.Terminal(t)
			var stdout strings.Builder
			e := newEnv(api)
			delete(e, "LOG_FORMAT") // as a user runs it: text on a terminal
			code := run(context.Background(), append([]string{in, "-o", t.TempDir(), "--vocabulary", ""}, tc.args...), e.get, &stdout, tty)
			text := written()
			if code != exitOK {
				t.Fatalf("exit %d:\n%s", code, text)
			}
			if !strings.Contains(text, "3 files") || strings.Contains(text, `{"time"`) {
				t.Errorf("no readable summary of 3 files on the terminal:\n%s", text)
			}
			if got := strings.Count(text, "batch summary"); tc.summaries >= 0 && got != tc.summaries {
				t.Errorf("%d document summaries on the terminal, want %d:\n%s", got, tc.summaries, text)
			}
			for _, w := range tc.want {
				if strings.Count(text, w) != 1 {
					t.Errorf("%q is not on the terminal once:\n%s", w, text)
				}
			}
			if strings.Contains(text, `b: blocks detected`) {
				t.Errorf("a warning repeated in the same words:\n%s", text)
			}
		})
	}
}
