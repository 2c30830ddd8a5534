package paradata

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"archivekit/internal/licence"
)

func read(t *testing.T, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s is not JSON: %v", p, err)
	}
	return m
}

func TestRunLifecycle(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 5, 30, 10, 20, 33, 0, time.UTC)
	clock := start
	r, err := startWithClock(dir, "260530-102033", start, Info{ToolVersion: "v0.1.0"}, func() time.Time { return clock })
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(r.Path()) != "260530-102033_page-classification.json" {
		t.Errorf("path %s", r.Path())
	}
	m := read(t, r.Path())
	if m["status"] != StatusRunning || m["license"] != "UNKNOWN" || !runIDOf(m["run_id"], "260530-102033") {
		t.Errorf("initial file: %v", m)
	}

	_, file, _, _ := runtime.Caller(0)
	comps, err := licence.LoadComponents(filepath.Join(filepath.Dir(file), "..", "..", "setup", "para_config.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r.SetLicence(comps.Resolve(comps.Counting()...))
	r.SetConfig("top_n", 3)
	r.SetConfig("revision", "v4.4")
	r.AddModel(Model{Revision: "v1.4", Path: "weights/v1.4", Demo: true})
	r.AddInputs(4)
	r.Processed(3)
	r.Skip("in/bad.png", "cannot decode: unexpected EOF")
	r.CountOutput("csv", 3)
	r.AddOutputFile("result/260530-102033_v4.4_TOP-3.csv")
	clock = start.Add(90 * time.Second)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	// The run then fails part-way.
	clock = start.Add(120 * time.Second)
	if err := r.Finish(errors.New("model forward failed")); err != nil {
		t.Fatal(err)
	}
	m = read(t, r.Path())
	if m["status"] != StatusFailed || m["error"] != "model forward failed" {
		t.Errorf("status %v error %v", m["status"], m["error"])
	}
	if m["license"] != "MIT" || m["license_url"] != "https://opensource.org/license/mit/" {
		t.Errorf("licence %v %v", m["license"], m["license_url"])
	}
	detail := m["license_detail"].(map[string]any)
	if detail["effective_license"] != "MIT" || len(detail["components"].([]any)) != 1 {
		t.Errorf("license_detail %v", detail)
	}
	if m["demo_ensemble"] != true || m["duration_seconds"] != 120.0 || m["end_time"] != "2026-05-30T10:22:33Z" {
		t.Errorf("demo %v duration %v end %v", m["demo_ensemble"], m["duration_seconds"], m["end_time"])
	}
	st := m["statistics"].(map[string]any)
	if st["input_files_total"] != 4.0 || st["successfully_processed"] != 3.0 || st["skipped_files"] != 1.0 {
		t.Errorf("statistics %v", st)
	}
	if rate := st["performance_per_minute"].(map[string]any)["csv"]; rate != 1.5 {
		t.Errorf("csv per minute %v, want 1.5", rate)
	}
	sk := m["skipped_files_detail"].([]any)[0].(map[string]any)
	if sk["file"] != "in/bad.png" || !strings.Contains(sk["reason"].(string), "decode") {
		t.Errorf("skipped %v", sk)
	}
	if m["config"].(map[string]any)["top_n"] != 3.0 {
		t.Errorf("config %v", m["config"])
	}
	for _, k := range []string{"schema_version", "program", "tool_version", "repository", "runner_ref", "docker_image", "start_time", "outputs", "warnings", "models"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing %q", k)
		}
	}
}

func TestConcurrentUpdates(t *testing.T) {
	r, err := Start(t.TempDir(), "s", time.Now(), Info{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 50; i++ {
				r.Processed(1)
				r.CountOutput("csv", 1)
				if i%10 == 0 {
					r.Flush()
				}
			}
			done <- true
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	if err := r.Finish(nil); err != nil {
		t.Fatal(err)
	}
	s := r.Snapshot()
	if s.Statistics.SuccessfullyProcessed != 200 || s.Statistics.OutputCountsByType["csv"] != 200 || s.Status != StatusCompleted {
		t.Errorf("snapshot %+v", s.Statistics)
	}
}

// Runs of the same second into one folder each get their own stamp.
func TestCreateClaimsAFreeStamp(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var stamps []string
	for i := 0; i < 3; i++ {
		r, stamp, err := Create(dir, "260102-030405", start, Info{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Path() != filepath.Join(dir, FileName(stamp)) || !runIDOf(r.Snapshot().RunID, stamp) {
			t.Errorf("path %s, run id %s, stamp %s", r.Path(), r.Snapshot().RunID, stamp)
		}
		stamps = append(stamps, stamp)
	}
	if got := strings.Join(stamps, " "); got != "260102-030405 260102-030405-2 260102-030405-3" {
		t.Errorf("stamps %s", got)
	}
}

// stopped is an error that says the run was stopped, not failed (as
// cliflags.Stopped does for Ctrl-C and SIGTERM).
type stopped struct{}

func (stopped) Error() string     { return "interrupted by Ctrl-C (SIGINT)" }
func (stopped) Interrupted() bool { return true }

// SetOutcome records a run stopped by a signal as interrupted, naming the
// signal, not as failed with "context canceled"; a wrapped cause counts.
func TestSetOutcome(t *testing.T) {
	for _, c := range []struct {
		name          string
		err           error
		status, error string
	}{
		{"completed", nil, StatusCompleted, ""},
		{"failed", errors.New("model forward failed"), StatusFailed, "model forward failed"},
		{"interrupted", stopped{}, StatusInterrupted, "interrupted by Ctrl-C (SIGINT)"},
		{"interrupted, wrapped", fmt.Errorf("run: %w", stopped{}), StatusInterrupted, "run: interrupted by Ctrl-C (SIGINT)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h Header
			h.SetOutcome(c.err)
			if h.Status != c.status || h.Error != c.error {
				t.Errorf("status %q error %q, want %q %q", h.Status, h.Error, c.status, c.error)
			}
		})
	}
}

// The run metadata names the commit the tool was built from when it is
// known (two builds of one version), and leaves it out when not.
func TestHeaderToolCommit(t *testing.T) {
	for _, c := range []string{"3f2a9c1d0b7e", ""} {
		h := NewHeader(Program, time.Now(), Info{ToolVersion: "0.1.0", ToolCommit: c})
		b, _ := json.Marshal(h)
		if has := strings.Contains(string(b), `"tool_commit":"`+c+`"`); has != (c != "") {
			t.Errorf("commit %q: %s", c, b)
		}
	}
}
