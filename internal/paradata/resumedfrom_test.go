package paradata

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A resumed run names every earlier run whose ledger it read, with the
// status its run metadata gives once checked: one killed (still
// "running") is marked interrupted, one that recorded its outcome keeps
// it, one whose run metadata is gone is "unknown", named by its stamp.
func TestRecordInterruptedNamesEarlierRuns(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "ledger")
	os.Mkdir(led, 0o777)
	start := time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)
	tests := []struct {
		stamp, status, want string
	}{
		{"261129-190001", StatusRunning, StatusInterrupted},
		{"261129-190002", StatusInterrupted, StatusInterrupted},
		{"261129-190003", StatusCompleted, StatusCompleted},
		{"261129-190004", "", "unknown"},
	}
	var ended []string
	for _, tc := range tests {
		f := filepath.Join(led, tc.stamp+".jsonl")
		os.WriteFile(f, []byte(`{"ledger":1,"tool":"t","config":"k"}`+"\n"+`{"item":"a.png","sha256":"00","state":"done"}`+"\n"), 0o666)
		ended = append(ended, f)
		if tc.status == "" {
			continue
		}
		r, err := startWithClock(dir, tc.stamp, start, Info{}, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		r.Update(func(d *Document) { d.Status = tc.status })
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	r := Record(start, Info{RunID: "261129-191000"})
	r.RecordInterrupted(slog.New(slog.NewTextHandler(io.Discard, nil)), "261129-191000", ended, ClassifierMeta(dir))
	d := r.Snapshot()
	if len(d.ResumedFrom) != len(tests) {
		t.Fatalf("resumed_from %+v, want %d runs", d.ResumedFrom, len(tests))
	}
	for i, tc := range tests {
		if e := d.ResumedFrom[i]; !(runIDOf(e.RunID, tc.stamp) || tc.want == "unknown" && e.RunID == tc.stamp) || e.Status != tc.want || e.ItemsFinished != 1 {
			t.Errorf("resumed_from[%d] = %+v, want run %s %s with 1 item finished", i, e, tc.stamp, tc.want)
		}
	}
	if len(d.Interrupted) != 1 || !runIDOf(d.Interrupted[0].RunID, tests[0].stamp) {
		t.Errorf("interrupted_runs %+v, want only %s", d.Interrupted, tests[0].stamp)
	}
}
