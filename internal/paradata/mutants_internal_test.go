package paradata

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// outcome is an error that says what the run's end was, or that it was
// not that (the method reporting false).
type outcome struct{ interrupted, incomplete, canceled bool }

func (outcome) Error() string       { return "stopped" }
func (o outcome) Interrupted() bool { return o.interrupted }
func (o outcome) Incomplete() bool  { return o.incomplete }
func (o outcome) Canceled() bool    { return o.canceled }

// Without this, a run left with inputs to do or canceled by its client
// would be recorded as failed, an error that says it is not an
// interruption as interrupted, and a run that completes after an earlier
// outcome would keep that outcome's error.
func TestSetOutcomeKinds(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		status string
	}{
		{"incomplete", outcome{incomplete: true}, StatusIncomplete},
		{"canceled", outcome{canceled: true}, StatusCanceled},
		{"says not interrupted", outcome{}, StatusFailed},
	} {
		var h Header
		h.SetOutcome(c.err)
		if h.Status != c.status || h.Error != "stopped" {
			t.Errorf("%s: status %q error %q, want %q", c.name, h.Status, h.Error, c.status)
		}
	}
	var h Header
	h.SetOutcome(errors.New("disk full"))
	h.SetOutcome(nil)
	if h.Status != StatusCompleted || h.Error != "" {
		t.Errorf("completed after a failure: status %q error %q", h.Status, h.Error)
	}
}

// Without this, a resumed run's done_before would lose what an earlier
// call kept, its rates would count the kept outputs as this run's work,
// and a snapshot already handed out would change afterwards.
func TestKeptBeforeAndRates(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := Record(start, Info{RunID: "r"})
	r.now = func() time.Time { return start.Add(time.Minute) }
	r.CountOutput("csv", 10)
	r.KeptBefore(Before{Files: 2, Failed: 1, SuccessfullyProcessed: 4, OutputCountsByType: map[string]int{"csv": 4}, ThisRunOnly: []string{"units"}})
	first := r.Snapshot()
	r.KeptBefore(Before{Files: 1, OutputCountsByType: map[string]int{"csv": 2}})
	s := r.Snapshot()
	want := Before{Files: 3, Failed: 1, SuccessfullyProcessed: 4, OutputCountsByType: map[string]int{"csv": 6}, ThisRunOnly: []string{"units"}}
	if !reflect.DeepEqual(*s.Statistics.DoneBefore, want) {
		t.Errorf("done_before %+v, want %+v", *s.Statistics.DoneBefore, want)
	}
	if got := s.Statistics.PerformancePerMinute["csv"]; !near(got, 4) {
		t.Errorf("csv per minute %v, want 4 (10 less the 6 kept, in a minute)", got)
	}
	if s.Statistics.OutputCountsByType["csv"] != 10 {
		t.Errorf("csv count %d, want 10 (the whole run)", s.Statistics.OutputCountsByType["csv"])
	}
	if first.Statistics.DoneBefore.Files != 2 || first.Statistics.DoneBefore.OutputCountsByType["csv"] != 4 {
		t.Errorf("an earlier snapshot changed: %+v", *first.Statistics.DoneBefore)
	}
}

// Without this, rates of a run that took no time would be infinite, and
// rates and durations would carry more decimals than the spec's.
func TestPerMinuteAndRound(t *testing.T) {
	if got := PerMinute(map[string]int{"csv": 5}, 0)["csv"]; got != 0 {
		t.Errorf("rate over no time %v, want 0", got)
	}
	got := PerMinute(map[string]int{"csv": 1}, 3*time.Minute)["csv"]
	if !near(got, 0.3333) {
		t.Errorf("rate %v, want 0.3333", got)
	}
	for _, c := range []struct {
		x    float64
		dec  int
		want float64
	}{
		{0.25, 1, 0.3}, {-0.25, 1, -0.3}, {1.26, 1, 1.3}, {0.24, 1, 0.2},
	} {
		if got := round(c.x, c.dec); !near(got, c.want) {
			t.Errorf("round(%v, %d) = %v, want %v", c.x, c.dec, got, c.want)
		}
	}
}

// Without this, a run started or ended on a clock not in UTC would
// record local times, and its duration would carry many decimals.
func TestTimesInUTC(t *testing.T) {
	zone := time.FixedZone("CET", 3600)
	start := time.Date(2026, 3, 1, 13, 0, 0, 0, zone)
	h := NewHeader(Program, start, Info{})
	h.SetEnd(start, start.Add(1234567*time.Microsecond))
	if h.StartTime != "2026-03-01T12:00:00Z" || !strings.HasSuffix(h.EndTime, "Z") || !near(h.DurationSeconds, 1.235) {
		t.Errorf("start %s end %s duration %v", h.StartTime, h.EndTime, h.DurationSeconds)
	}
}

// Without this, an interrupted run whose ledger records no finished
// item would not say so (0 is a count, -1 unknown).
func TestMarkInterruptedFinished(t *testing.T) {
	for _, finished := range []int{0, -1} {
		p := filepath.Join(t.TempDir(), "m.json")
		os.WriteFile(p, []byte(`{"status":"running","run_id":"x"}`), 0o666)
		if _, ok, err := MarkInterrupted(p, "y", finished); !ok || err != nil {
			t.Fatalf("%v %v", ok, err)
		}
		v, has := read(t, p)["ledger_items_finished"]
		if has != (finished >= 0) || (has && v != float64(finished)) {
			t.Errorf("finished %d: ledger_items_finished %v (present %v)", finished, v, has)
		}
	}
}

// Without this, a run whose metadata folder cannot be written would be
// given a stamp as if its file were claimed.
func TestClaimFails(t *testing.T) {
	if s, err := Claim(filepath.Join(t.TempDir(), "missing"), "260101-000000", FileName); err == nil {
		t.Errorf("Claim in a missing folder: %q, no error", s)
	}
}

// Without this, a snapshot handed out (a service's job record) would
// change with the run's later updates, outputs would be listed in the
// order written, a demo model followed by another would stop marking the
// run as a demo, the unit would not be recorded, and a skipped file's
// name that is not UTF-8 would be written raw.
func TestSnapshotAndTrail(t *testing.T) {
	r := Record(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Info{RunID: "r"})
	r.SetConfig("top_n", 3)
	r.CountOutput("csv", 1)
	r.SetTraining("epochs", 1)
	r.SetReview("target", 0.9)
	s := r.Snapshot()
	r.SetConfig("top_n", 5)
	r.CountOutput("csv", 1)
	r.SetTraining("epochs", 2)
	r.SetReview("target", 0.5)
	if s.Config["top_n"] != 3 || s.Statistics.OutputCountsByType["csv"] != 1 || s.Training["epochs"] != 1 || s.Review["target"] != 0.9 {
		t.Errorf("snapshot changed: config %v counts %v training %v review %v", s.Config, s.Statistics.OutputCountsByType, s.Training, s.Review)
	}
	r.AddOutputFile("b.csv", "a.csv")
	r.AddModel(Model{Path: "demo", Demo: true})
	r.AddModel(Model{Path: "published"})
	r.SetUnit("page")
	r.Skip("z\xe1pis.png", "bad byte \xff")
	s = r.Snapshot()
	if strings.Join(s.Outputs, " ") != "a.csv b.csv" || !s.Demo || !s.DemoEnsemble || s.Statistics.Unit != "page" {
		t.Errorf("outputs %v demo %v %v unit %q", s.Outputs, s.Demo, s.DemoEnsemble, s.Statistics.Unit)
	}
	if sk := s.SkippedFilesDetail[0]; sk.File != `z\xe1pis.png` || sk.Reason != `bad byte \xff` {
		t.Errorf("skipped %+v", sk)
	}
}

// Without this, a merged run would record the time it was merged instead
// of its shards' span, and a service's job record would lack its outcome,
// its end or its final newline.
func TestSpanAndEncode(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := Record(start.Add(time.Hour), Info{RunID: "r"})
	r.Span(start, start.Add(2*time.Minute))
	s := r.Snapshot()
	if s.StartTime != "2026-03-01T12:00:00Z" || s.EndTime != "2026-03-01T12:02:00Z" || !near(s.DurationSeconds, 120) {
		t.Errorf("span: start %s end %s duration %v", s.StartTime, s.EndTime, s.DurationSeconds)
	}
	q := Record(start, Info{RunID: "q"})
	b, err := q.Encode(errors.New("model forward failed"), start.Add(30*time.Second))
	if err != nil || !strings.HasSuffix(string(b), "}\n") {
		t.Fatalf("%q, %v", b, err)
	}
	var d Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Status != StatusFailed || d.Error != "model forward failed" || d.EndTime != "2026-03-01T12:00:30Z" {
		t.Errorf("encoded status %q error %q end %s", d.Status, d.Error, d.EndTime)
	}
}

// Without this, a resumed run would name an earlier run whose ledger it
// cannot read as having finished 0 items, an earlier run whose metadata
// has no status as known, one without a run id by an empty id, and
// would look for the wrong metadata file of a translator's or an old
// shard's ledger.
func TestEarlierRuns(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s1.json"), []byte(`{"status":"completed"}`), 0o666)
	os.WriteFile(filepath.Join(dir, "s2.json"), []byte(`{"run_id":"s2.abcd0123"}`), 0o666)
	for _, c := range []struct {
		meta   string
		runID  string
		status string
	}{
		{"s1.json", "s1", StatusCompleted},
		{"s2.json", "s2", "unknown"},
		{"s3.json", "s3", "unknown"},
	} {
		if e := earlier(filepath.Join(dir, c.meta), "l"); e.RunID != c.runID || e.Status != c.status {
			t.Errorf("%s: %+v, want run %s %s", c.meta, e, c.runID, c.status)
		}
	}
	r := Record(time.Now(), Info{RunID: "r"})
	r.RecordInterrupted(slog.New(slog.NewTextHandler(io.Discard, nil)), "r", []string{filepath.Join(dir, "gone.jsonl")}, MetaBeside(dir))
	if rf := r.Snapshot().ResumedFrom; len(rf) != 1 || rf[0].ItemsFinished != -1 || rf[0].File != filepath.Join(dir, "gone.json") {
		t.Errorf("resumed_from %+v, want gone.json with -1 items finished", rf)
	}
	if got, want := ClassifierMeta(dir)("/l/260101-000000_shard-1-of-2.jsonl"), filepath.Join(dir, "260101-000000_page-classification.json"); got != want {
		t.Errorf("ClassifierMeta = %s, want %s", got, want)
	}
}

// Without this, a merged run's entry for a shard would carry an empty
// tool_commit, or an empty supersedes list.
func TestEntryOmitsEmpty(t *testing.T) {
	d := newDocument(time.Now(), Info{RunID: "r"})
	e := ShardRun[*Document]{Doc: d}.Entry([]string{}, nil)
	if _, ok := e["tool_commit"]; ok {
		t.Errorf("tool_commit in %v", e)
	}
	if _, ok := e["supersedes"]; ok {
		t.Errorf("supersedes in %v", e)
	}
}
