package shard

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChoose(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	// part is shard i/n with status; at is its start in minutes after t0
	// (it ends a minute later); opts: "resume", "ledger=X", "empty".
	part := func(i, n int, status string, at int, opts ...string) Part {
		p := Part{Spec: Spec{Index: i, Count: n}, Name: fmt.Sprintf("run-%d-%s-%d", i, status, at), Status: status, Completed: status == "completed",
			Ledger: "out/ledger/tool_k", Start: t0.Add(time.Duration(at) * time.Minute), End: t0.Add(time.Duration(at+1) * time.Minute)}
		for _, o := range opts {
			switch {
			case o == "resume":
				p.Resumed = true
			case o == "empty":
				p.Empty, p.Ledger = true, ""
			case strings.HasPrefix(o, "ledger="):
				p.Ledger = strings.TrimPrefix(o, "ledger=")
			case strings.HasPrefix(o, "in="): // the input folder it was cut from
				p.Folder = strings.TrimPrefix(o, "in=")
				p.Inputs = InputsDigest([]string{p.Folder + "/a.png", p.Folder + "/b.png"})
			}
		}
		return p
	}
	for _, c := range []struct {
		name   string
		parts  []Part
		chosen string
		err    string
	}{
		{"in any order", []Part{part(2, 3, "completed", 0), part(0, 3, "completed", 0), part(1, 3, "completed", 0)}, "[{1 []} {2 []} {0 []}]", ""},
		{"a failed try beside its retry", []Part{part(0, 2, "completed", 0), part(1, 2, "failed", 0), part(1, 2, "completed", 2)}, "[{0 []} {2 []}]", ""},
		{"a completed shard resumed", []Part{part(0, 2, "completed", 0), part(1, 2, "completed", 0), part(1, 2, "completed", 5, "resume")}, "[{0 []} {2 [1]}]", ""},
		{"resumed twice, listed out of order", []Part{part(0, 1, "completed", 9, "resume"), part(0, 1, "completed", 0), part(0, 1, "failed", 3), part(0, 1, "completed", 4, "resume")}, "[{0 [1 3]}]", ""},
		{"a completed resume after a killed run", []Part{part(0, 1, "running", 0), part(0, 1, "completed", 5, "resume")}, "[{1 []}]", ""},
		{"empty share run twice", []Part{part(0, 1, "completed", 0, "empty"), part(0, 1, "completed", 5, "empty")}, "[{1 [0]}]", ""},
		{"missing", []Part{part(0, 3, "completed", 0)}, "", "missing shards 1/3, 2/3 of 3"},
		{"twice", []Part{part(0, 2, "completed", 0), part(0, 2, "completed", 0), part(1, 2, "completed", 0)}, "", "the shards overlap"},
		{"twice, the later not resumed", []Part{part(0, 1, "completed", 0), part(0, 1, "completed", 5)}, "", "not run with --resume"},
		{"resumed from another ledger", []Part{part(0, 1, "completed", 0), part(0, 1, "completed", 5, "resume", "ledger=elsewhere/ledger/tool_k")}, "", "different ledgers"},
		{"resumed while the other ran", []Part{part(0, 1, "completed", 0), part(0, 1, "completed", 0, "resume")}, "", "started before the earlier ended"},
		{"unfinished", []Part{part(0, 2, "completed", 0), part(1, 2, "running", 0)}, "", "did not complete: run-1-running-0 (running); if it is still running, merge once it has ended"},
		{"other count", []Part{part(0, 2, "completed", 0), part(1, 3, "completed", 0)}, "", "shards of different runs"},
		{"none", nil, "", "no shard run"},
		// review1 F3: a shard resumed over another input folder, or
		// shards of two folders, are not one run.
		{"resumed over another input", []Part{part(0, 2, "completed", 0, "in=in1"), part(1, 2, "completed", 0, "in=in1"), part(0, 2, "completed", 5, "resume", "in=in2")}, "",
			"run-0-completed-0 and run-0-completed-5 were cut from different input lists (input in1"},
		{"shards of two inputs", []Part{part(0, 2, "completed", 0, "in=in1"), part(1, 2, "completed", 0, "in=in2")}, "",
			"not shards of one run: run-0-completed-0 and run-1-completed-0 were cut from different input lists"},
		{"one run records its list, the other not", []Part{part(0, 2, "completed", 0, "in=in1"), part(1, 2, "completed", 0)}, "", "digest none"},
		{"same list, resumed", []Part{part(0, 2, "completed", 0, "in=in1"), part(1, 2, "completed", 0, "in=in1"), part(0, 2, "completed", 5, "resume", "in=in1")}, "[{2 [0]} {1 []}]", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Choose(c.parts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				if c.name == "unfinished" && !errors.Is(err, ErrIncomplete) {
					t.Errorf("not ErrIncomplete: %v", err)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != c.chosen {
				t.Errorf("Choose = %v, %v; want %s", got, err, c.chosen)
			}
		})
	}
}

func TestRunPart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x_shard.json")
	p := RunPart(path, Spec{1, 3}, "completed", "2026-11-23T06:00:00.5Z", "2026-11-23T06:01:00Z",
		map[string]any{"ledger_key": "abc", "retry_failed": true, InputsConfig: "d1", FolderConfig: "/in"}, "pageclass_", 4)
	want := Part{Spec: Spec{1, 3}, Name: path, Status: "completed", Completed: true, Resumed: true, Inputs: "d1", Folder: "/in",
		Ledger: filepath.Join(dir, "ledger", "pageclass_abc"),
		Start:  time.Date(2026, 11, 23, 6, 0, 0, 5e8, time.UTC), End: time.Date(2026, 11, 23, 6, 1, 0, 0, time.UTC)}
	if fmt.Sprint(p) != fmt.Sprint(want) {
		t.Errorf("RunPart = %+v\nwant %+v", p, want)
	}
	if q := RunPart(path, Spec{1, 3}, "running", "", "", map[string]any{"resume": false}, "pageclass_", 0); q.Resumed || q.Completed || !q.Empty || q.Ledger != "" {
		t.Errorf("RunPart of an empty unfinished run = %+v", q)
	}
}

// TestRunPartCompletedAndResumed: a run counts as completed when its status
// says so, or when it failed having tried every input of its share
// (all_inputs_tried); and it continues its ledger when run with --resume,
// --retry-failed or --chunk. If it failed, a merge would refuse a share that
// tried everything (a --resume of it only fails again, so the merge could
// never be made), or take a share that failed midway as complete (its
// missing inputs silently absent from the merged tables); or a chunked run
// that continued its ledger would be called an overlapping independent run.
func TestRunPartCompletedAndResumed(t *testing.T) {
	for _, c := range []struct {
		name      string
		status    string
		config    map[string]any
		completed bool
		resumed   bool
	}{
		{"completed", "completed", map[string]any{}, true, false},
		{"failed, every input tried", "failed", map[string]any{TriedConfig: true}, true, false},
		{"failed midway", "failed", map[string]any{}, false, false},
		{"failed, tried false", "failed", map[string]any{TriedConfig: false}, false, false},
		{"running, every input tried", "running", map[string]any{TriedConfig: true}, false, false},
		{"resume", "completed", map[string]any{"resume": true}, true, true},
		{"retry failed", "completed", map[string]any{"retry_failed": true}, true, true},
		{"chunk", "completed", map[string]any{"chunk": true}, true, true},
		{"chunk false", "completed", map[string]any{"chunk": false, "resume": false, "retry_failed": false}, true, false},
	} {
		p := RunPart("x_shard.json", Spec{0, 2}, c.status, "", "", c.config, "pageclass_", 3)
		if p.Completed != c.completed || p.Resumed != c.resumed {
			t.Errorf("%s: RunPart completed %v resumed %v, want %v %v", c.name, p.Completed, p.Resumed, c.completed, c.resumed)
		}
	}
}

// TestInputsDigest: runs of one sharded run agree on the digest of its
// input list whatever order each machine listed it in, and two lists that
// only join to the same bytes differ. If it failed, shards of one run
// listed in another order would be refused as "cut from different input
// lists", or shards of two different input lists merged as one run.
func TestInputsDigest(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []string
		same bool
	}{
		{"same order", []string{"a/1.png", "b/2.png"}, []string{"a/1.png", "b/2.png"}, true},
		{"other order", []string{"b/2.png", "a/1.png", "c.png"}, []string{"c.png", "a/1.png", "b/2.png"}, true},
		{"keys split elsewhere", []string{"ab", "c"}, []string{"a", "bc"}, false},
		{"one key more", []string{"a", "b"}, []string{"a", "b", "c"}, false},
		{"empty key", []string{"a"}, []string{"a", ""}, false},
	} {
		da, db := InputsDigest(c.a), InputsDigest(c.b)
		if (da == db) != c.same || len(da) != 64 {
			t.Errorf("%s: InputsDigest(%q) = %s, InputsDigest(%q) = %s; want equal %v", c.name, c.a, da, c.b, db, c.same)
		}
	}
}
