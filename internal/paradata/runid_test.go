package paradata

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// runIDOf says whether id is a run id RunIDFor gives for stamp.
func runIDOf(id any, stamp string) bool {
	s, ok := id.(string)
	return ok && regexp.MustCompile(`^`+regexp.QuoteMeta(stamp)+`\.[0-9a-f]{8}$`).MatchString(s)
}

// Runs started in the same second into different folders (the shards of
// one batch, a run per book) have the same stamp and different run ids;
// each id still begins with its stamp.
func TestRunIDsOfOneSecond(t *testing.T) {
	start := time.Date(2026, 11, 30, 4, 5, 6, 0, time.UTC)
	seen := map[string]string{}
	for i := 0; i < 20; i++ {
		dir := t.TempDir()
		r, stamp, err := Create(dir, "261130-040506", start, Info{})
		if err != nil {
			t.Fatal(err)
		}
		id := r.Snapshot().RunID
		if stamp != "261130-040506" || !runIDOf(id, stamp) {
			t.Fatalf("run %d: stamp %q, run id %q; want the stamp and the stamp with eight hex digits", i, stamp, id)
		}
		if prev, ok := seen[id]; ok {
			t.Fatalf("runs in %s and %s share the run id %s", prev, dir, id)
		}
		seen[id] = dir
	}
	if strings.Contains(RunIDFor("261130-040506-2"), "/") {
		t.Error("a run id holds a slash")
	}
}
