package main

import (
	"bytes"
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"archivekit/internal/cliflags"
	"archivekit/internal/paradata"
	"archivekit/internal/paradata/paradatatest"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator/translatortest"
)

// A run interrupted (as by Ctrl-C) after k inputs and resumed: the resumed
// run's record counts the whole run (the outputs the folder holds) and says
// which part of it the earlier run did (statistics.done_before) and which
// figures count its own work only; its performance_per_minute is its own
// outputs over its own time; and it names the run it continued with that
// run's status (resumed_from). Before, it gave the whole run's outputs
// over the resumed run's time, and interrupted_runs was empty: the
// interrupted run had recorded its own outcome.
func TestResumedRecordSaysWhatIsWhose(t *testing.T) {
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	root := recordsTree(t, recs)
	n := len(recs) + 1 // and a broken file
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	const k = 4
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	itemHook = func(recorded int) {
		if recorded == k {
			cancel(cliflags.Stopped{Signal: os.Interrupt})
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(ctx, recordArgs(root, out), newEnv(api).get, &stdout, &stderr)
	itemHook = nil
	if code != cliflags.ExitInterrupted {
		t.Fatalf("interrupted run: exit %d: %s", code, stderr.String())
	}
	if r := runCLI(t, newEnv(api), recordArgs(root, out, "--resume")...); r.code != exitOK {
		t.Fatalf("resumed run: exit %d: %s", r.code, r.stderr)
	}
	docs := paradatatest.ByStatus[runmeta.Doc](t, out, "_translator.json")
	first, resumed := docs[paradata.StatusInterrupted], docs[paradata.StatusCompleted]
	if first.RunID == "" || resumed.RunID == "" {
		t.Fatalf("want an interrupted and a completed run, got statuses %v", slices.Collect(maps.Keys(docs)))
	}

	st := resumed.Statistics
	before := st.DoneBefore
	if before == nil {
		t.Errorf("the resumed run's statistics do not say what earlier runs did (no done_before)")
		before = &paradata.Before{}
	}
	if before.Files+before.Failed != k || before.SuccessfullyProcessed != before.Files {
		t.Errorf("done_before: %d files, %d failed, %d processed; want %d kept in all, processed = files", before.Files, before.Failed, before.SuccessfullyProcessed, k)
	}
	if st.SuccessfullyProcessed != n-1 || st.OutputCountsByType["xml"] != n-1 {
		t.Errorf("whole run: %d processed, %d xml outputs; want %d each", st.SuccessfullyProcessed, st.OutputCountsByType["xml"], n-1)
	}
	if before.OutputCountsByType["xml"] != before.Files || before.OutputCountsByType["csv"] != before.Files {
		t.Errorf("done_before outputs %v, want xml and csv %d each", before.OutputCountsByType, before.Files)
	}
	for _, f := range []string{"units_translated", "backend_calls", "segment_status"} {
		if !slices.Contains(before.ThisRunOnly, f) {
			t.Errorf("done_before.this_run_only %v lacks %s", before.ThisRunOnly, f)
		}
	}
	// The rate is the resumed run's own outputs (not those the
	// interrupted run wrote) over its own time.
	own := float64(st.OutputCountsByType["xml"] - first.Statistics.OutputCountsByType["xml"])
	if got := st.PerformancePerMinute["xml"] * resumed.DurationSeconds / 60; math.Abs(got-own) > 0.02*own+0.01 {
		t.Errorf("performance_per_minute.xml %.1f over %.3f s is %.2f outputs, want this run's own %v",
			st.PerformancePerMinute["xml"], resumed.DurationSeconds, got, own)
	}

	want := []paradata.Earlier{{RunID: first.RunID, Status: paradata.StatusInterrupted}}
	var got []paradata.Earlier
	for _, e := range resumed.ResumedFrom {
		if e.ItemsFinished != k {
			t.Errorf("resumed_from %s: %d items finished, want %d", e.RunID, e.ItemsFinished, k)
		}
		got = append(got, paradata.Earlier{RunID: e.RunID, Status: e.Status})
	}
	if !slices.Equal(got, want) {
		t.Errorf("resumed_from %+v, want %+v", got, want)
	}
}
