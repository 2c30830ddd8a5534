package main

import (
	"context"
	"math"
	"os"
	"slices"
	"testing"

	"archivekit/internal/cliflags"
	"archivekit/internal/paradata"
	"archivekit/internal/paradata/paradatatest"
)

// A run stopped (as by Ctrl-C) after k files records as its input total
// the pages collected (single-page files here), as its summary's files
// left and the files done add up to; before, it counted only the files
// opened by then. The run that resumes it counts the whole run, says what
// the earlier run did (statistics.done_before), rates only its own rows
// over its own time, and names the run it continued (resumed_from); before,
// it said only items_from_ledger.
func TestInterruptedAndResumedRecords(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 4)
	e.model(t, "v4.4")
	const k = 2
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	itemHook = func(n int) {
		if n == k {
			cancel(cliflags.Stopped{Signal: os.Interrupt})
		}
	}
	code, log := e.runCtx(t, ctx, "-d", e.in)
	itemHook = nil
	if code != exitInterrupted {
		t.Fatalf("stopped run: exit %d: %s", code, log)
	}
	_, done := ledgerEntries(t, e.results)
	first := readParadata(t, e)
	left := summaryIn(t, e.results).FilesLeft
	if first.Status != paradata.StatusInterrupted || first.Statistics.InputFilesTotal != len(pages) || done+left != len(pages) {
		t.Errorf("stopped run: status %q, input_files_total %d, %d done + %d left (summary); want interrupted, %d collected",
			first.Status, first.Statistics.InputFilesTotal, done, left, len(pages))
	}

	if code, log := e.run(t, "-d", e.in, "--resume"); code != exitOK {
		t.Fatalf("resumed run: exit %d: %s", code, log)
	}
	resumed := paradatatest.ByStatus[paradata.Document](t, e.results, "_page-classification.json")[paradata.StatusCompleted]
	st := resumed.Statistics
	if st.InputFilesTotal != len(pages) || st.SuccessfullyProcessed != len(pages) {
		t.Errorf("resumed run: %d pages read, %d classified; want the whole run's %d", st.InputFilesTotal, st.SuccessfullyProcessed, len(pages))
	}
	if b := st.DoneBefore; b == nil || b.Files != done || b.Failed != 0 || b.SuccessfullyProcessed != done ||
		b.OutputCountsByType["csv"] != first.Statistics.OutputCountsByType["csv"] {
		t.Errorf("done_before %+v; want the stopped run's %d files and pages and its %d rows", b, done, first.Statistics.OutputCountsByType["csv"])
	}
	own := float64(st.OutputCountsByType["csv"] - first.Statistics.OutputCountsByType["csv"])
	if got := st.PerformancePerMinute["csv"] * resumed.DurationSeconds / 60; math.Abs(got-own) > 0.02*own+0.01 {
		t.Errorf("performance_per_minute.csv %.1f over %.3f s is %.2f rows, want this run's own %v",
			st.PerformancePerMinute["csv"], resumed.DurationSeconds, got, own)
	}
	var got []paradata.Earlier
	for _, r := range resumed.ResumedFrom {
		got = append(got, paradata.Earlier{RunID: r.RunID, Status: r.Status, ItemsFinished: r.ItemsFinished})
	}
	if want := []paradata.Earlier{{RunID: first.RunID, Status: paradata.StatusInterrupted, ItemsFinished: done}}; !slices.Equal(got, want) {
		t.Errorf("resumed_from %+v, want %+v", got, want)
	}
}
