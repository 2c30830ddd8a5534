package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/shard"
)

// TestShareCoversOnce: --shard 0/n ... n-1/n take every collected file
// exactly once, with the row keys of the whole input (two files of the
// same name in different folders keep the keys the whole run gives them),
// and chunked runs of different shards never continue the same tables.
func TestShareCoversOnce(t *testing.T) {
	root := t.TempDir()
	for b := 0; b < 4; b++ {
		dir := filepath.Join(root, fmt.Sprintf("box%d", b))
		os.MkdirAll(dir, 0o755)
		for p := 1; p <= 10; p++ {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("%04d.png", p)), []byte("x"), 0o644)
		}
	}
	whole, err := collect("", root, []string{".png"}, true, false)
	if err != nil {
		t.Fatal(err)
	}
	whole.share(shard.Spec{})
	wantKey := map[string]string{}
	for _, f := range whole.Files {
		k, err := whole.Keys.Key(f, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantKey[f] = fmt.Sprint(k)
	}
	const n = 3
	seen := map[string]int{}
	chunkKeys := map[string]bool{}
	for i := 0; i < n; i++ {
		set, err := collect("", root, []string{".png"}, true, false)
		if err != nil {
			t.Fatal(err)
		}
		set.share(shard.Spec{Index: i, Count: n})
		if set.All != len(whole.Files) {
			t.Errorf("shard %d: All %d, want %d", i, set.All, len(whole.Files))
		}
		for _, f := range set.Files {
			seen[f]++
			k, err := set.Keys.Key(f, 0)
			if err != nil || fmt.Sprint(k) != wantKey[f] {
				t.Errorf("shard %d: %s keyed %v (%v), the whole run keys it %s", i, f, k, err, wantKey[f])
			}
		}
		chunkKeys[inputKey(set, "", true)] = true
	}
	for _, f := range whole.Files {
		if seen[f] != 1 {
			t.Errorf("%s classified by %d shards", f, seen[f])
		}
	}
	if len(seen) != len(whole.Files) {
		t.Errorf("%d files in the shards, %d in the folder", len(seen), len(whole.Files))
	}
	if len(chunkKeys) != n || chunkKeys[inputKey(whole, "", true)] {
		t.Errorf("chunk keys of the shards are not distinct from each other and the whole run")
	}
}

// TestShardRuns: three runs with --shard i/3 give, together, the rows of
// the one-shot run: each page once, the same categories, scores within
// 1e-4 (batches are composed differently).
func TestShardRuns(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 2)
	e.model(t, "v4.4")
	rows := func(results string, args ...string) map[string][]string {
		code, log := e.run(t, append([]string{"-d", e.in, "--results", results}, args...)...)
		if code != exitOK {
			t.Fatalf("pageclass %v: exit %d: %s", args, code, log)
		}
		m, _ := filepath.Glob(filepath.Join(results, "*_v4.4_TOP-3.csv"))
		if len(m) != 1 {
			t.Fatalf("%v: %d tables", args, len(m))
		}
		// A shard's tables and run metadata say which share they hold
		// (they were named as a whole run's).
		if len(args) == 2 && args[0] == "--shard" {
			want := "-shard-" + strings.Replace(args[1], "/", "-of-", 1) + "_"
			meta, _ := filepath.Glob(filepath.Join(results, "*"+want+"page-classification.json"))
			if !strings.Contains(filepath.Base(m[0]), want) || len(meta) != 1 {
				t.Errorf("shard %s: table %s, run metadata %v; want names with %s", args[1], filepath.Base(m[0]), meta, want)
			}
			// Its ledger file is named by that stamp, the share said once.
			led, _ := filepath.Glob(filepath.Join(results, "ledger", "pageclass_*", "*.jsonl"))
			if len(led) != 1 || strings.Count(filepath.Base(led[0]), "shard") != 1 {
				t.Errorf("shard %s: ledger files %v; want one naming its share once", args[1], led)
			}
		}
		out := map[string][]string{}
		for _, r := range readCSV(t, m[0])[1:] {
			out[r[0]+" "+r[1]] = r[2:]
		}
		return out
	}
	whole := rows(filepath.Join(e.root, "whole"))
	got := map[string][]string{}
	for i := 0; i < 3; i++ {
		for k, v := range rows(filepath.Join(e.root, fmt.Sprint("shard", i)), "--shard", fmt.Sprintf("%d/3", i)) {
			if _, dup := got[k]; dup {
				t.Errorf("%s in two shards", k)
			}
			got[k] = v
		}
	}
	if len(got) != len(whole) {
		t.Fatalf("%d rows from the shards, %d from the whole run", len(got), len(whole))
	}
	for k, want := range whole {
		g := got[k]
		for j := range want {
			a, errA := strconv.ParseFloat(want[j], 64)
			b, errB := strconv.ParseFloat(g[j], 64)
			if (errA == nil && errB == nil && math.Abs(a-b) > 1e-4) || ((errA != nil || errB != nil) && want[j] != g[j]) {
				t.Errorf("%s: %v from the shards, %v from the whole run", k, g, want)
				break
			}
		}
	}
	if code, log := e.run(t, "-d", e.in, "--shard", "1/1"); code == exitOK || !strings.Contains(log, "0 <= i < n") {
		t.Errorf("--shard 1/1: exit %d: %s", code, log)
	}
}
