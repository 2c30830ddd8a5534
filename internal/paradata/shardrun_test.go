package paradata

import (
	"fmt"
	"testing"
	"time"

	"archivekit/internal/shard"
)

// A shard run's document gives shard.Select its status, times, config and
// input count, and the merged run its merged_shards entry (with the
// version and commit of the tool that ran it).
func TestShardRun(t *testing.T) {
	r, err := startWithClock(t.TempDir(), "s", time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC), Info{ToolVersion: "0.1.0", ToolCommit: "3f2a9c1d0b7e"}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	r.SetConfig("items_from_ledger", 2)
	r.AddInputs(5)
	r.Processed(4)
	r.Skip("x.png", "cannot decode")
	if err := r.Finish(nil); err != nil {
		t.Fatal(err)
	}
	d := r.Snapshot()
	s := ShardRun[*Document]{Path: "out/s.json", Spec: shard.Spec{Index: 1, Count: 3}, Doc: &d}
	m := s.Meta()
	if m.Path != "out/s.json" || m.Spec.String() != "1/3" || m.Status != StatusCompleted || m.Start != "2026-11-26T06:00:00Z" || m.End == "" || m.Inputs != 5 || m.Config["items_from_ledger"] != 2 {
		t.Errorf("Meta = %+v", m)
	}
	e := s.Entry([]string{"out/s0.json"}, map[string]any{"device": "cpu"})
	want := "map[device:cpu end_time:" + d.EndTime + " items_from_ledger:2 processed:4 run_id:" + d.RunID + " run_metadata:out/s.json shard:1/3 skipped:1 start_time:2026-11-26T06:00:00Z status:completed supersedes:[out/s0.json] tool_commit:3f2a9c1d0b7e tool_version:0.1.0]"
	if got := fmt.Sprint(e); got != want {
		t.Errorf("Entry =\n%s\nwant\n%s", got, want)
	}
	if _, ok := s.Entry(nil, nil)["supersedes"]; ok {
		t.Error("supersedes written for a run that continued none")
	}
}
