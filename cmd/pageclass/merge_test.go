package main

import (
	"archivekit/internal/cliflags"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"archivekit/internal/paradata"
	"archivekit/internal/shard"
)

// Three shards run into one results folder and merged give the one-shot
// run's tables row for row (a broken file among the inputs is in the
// merged failures table), and one run metadata listing the shards.
func TestMergeEqualsOneShot(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 2)
	e.model(t, "v4.4")
	write(t, filepath.Join(e.in, "TEXT", "broken.png"), "not a png")
	whole := filepath.Join(e.root, "whole")
	if code, log := e.run(t, "-d", e.in, "--raw", "--results", whole); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	shards := filepath.Join(e.root, "shards")
	for i := 0; i < 3; i++ {
		if code, log := e.run(t, "-d", e.in, "--raw", "--results", shards, "--shard", fmt.Sprintf("%d/3", i)); code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, code, log)
		}
	}
	merged := filepath.Join(e.root, "merged")
	if code, log := e.run(t, "--merge", "--results", merged, shards); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, log)
	}
	for _, suffix := range []string{"_v4.4_TOP-3.csv", "_v4.4_RAW.csv", "_" + FailuresTable} {
		got, want := tableRows(t, merged, suffix), tableRows(t, whole, suffix)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("merged %s differs from the one-shot run's:\n%s\nwant\n%s", suffix, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	var d paradata.Document
	m, _ := filepath.Glob(filepath.Join(merged, "*_page-classification.json"))
	if len(m) != 1 {
		t.Fatalf("run metadata %v", m)
	}
	b, _ := os.ReadFile(m[0])
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	list, _ := d.Config["merged_shards"].([]any)
	if d.Status != paradata.StatusCompleted || len(list) != 3 || d.Statistics.SuccessfullyProcessed != 22 ||
		d.Statistics.SkippedFiles != 1 || len(d.Models) != 1 || d.Config["topn"] != 3.0 {
		t.Errorf("merged run metadata: status %s, %d shards, %d processed, %d skipped, models %v, topn %v",
			d.Status, len(list), d.Statistics.SuccessfullyProcessed, d.Statistics.SkippedFiles, d.Models, d.Config["topn"])
	}
	// Its times are the shards' span, and its rate the rows over it (the
	// merge's own few milliseconds gave a rate a thousand times too high).
	var first, last time.Time
	var longest float64
	sh, _ := filepath.Glob(filepath.Join(shards, "*_page-classification*.json"))
	for _, p := range sh {
		var s paradata.Document
		b, _ := os.ReadFile(p)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		st, _ := time.Parse(time.RFC3339Nano, s.StartTime)
		en, _ := time.Parse(time.RFC3339Nano, s.EndTime)
		if first.IsZero() || st.Before(first) {
			first = st
		}
		if en.After(last) {
			last = en
		}
		longest = max(longest, s.DurationSeconds)
	}
	if d.StartTime != first.UTC().Format(time.RFC3339Nano) || d.EndTime != last.UTC().Format(time.RFC3339Nano) || d.DurationSeconds < longest {
		t.Errorf("merged run from %s to %s (%.3f s); the shards ran from %s to %s, the longest %.3f s",
			d.StartTime, d.EndTime, d.DurationSeconds, first, last, longest)
	}
	if rate, rows := d.Statistics.PerformancePerMinute["csv"], d.Statistics.OutputCountsByType["csv"]; math.Abs(rate-float64(rows)/d.DurationSeconds*60) > 0.01*rate+1 {
		t.Errorf("merged rate %.1f rows/min for %d rows in %.3f s", rate, rows, d.DurationSeconds)
	}
}

// Shards that are not one run's are refused with a clear error, and the
// merge writes nothing (it left a failed run metadata); shards missing or
// unfinished exit 75, as a run that may succeed later (it was 1 and 3).
func TestMergeRefuses(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	shards := filepath.Join(e.root, "shards")
	for i := 0; i < 3; i++ {
		if code, log := e.run(t, "-d", e.in, "--results", shards, "--shard", fmt.Sprintf("%d/3", i)); code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, code, log)
		}
	}
	metas, _ := filepath.Glob(filepath.Join(shards, "*_page-classification.json"))
	if len(metas) != 3 {
		t.Fatalf("%d shard run metadata", len(metas))
	}
	// edit copies the shard folder, changes shard k's run metadata, and
	// returns the copy.
	edit := func(t *testing.T, k int, change func(d map[string]any)) string {
		dir := t.TempDir()
		all, _ := filepath.Glob(filepath.Join(shards, "*"))
		for _, f := range all {
			if st, _ := os.Stat(f); st.IsDir() {
				continue
			}
			b, _ := os.ReadFile(f)
			os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644)
		}
		if change != nil {
			p := filepath.Join(dir, filepath.Base(metas[k]))
			var d map[string]any
			b, _ := os.ReadFile(p)
			json.Unmarshal(b, &d)
			change(d)
			b, _ = json.Marshal(d)
			os.WriteFile(p, b, 0o644)
		}
		return dir
	}
	for _, c := range []struct {
		name string
		args func(t *testing.T) []string
		code int
		want string
	}{
		{"missing shard", func(t *testing.T) []string { return []string{metas[0], metas[2]} }, cliflags.ExitIncomplete, "missing shards"},
		{"another model", func(t *testing.T) []string {
			return []string{edit(t, 1, func(d map[string]any) { d["models"].([]any)[0].(map[string]any)["digest"] = "sha256:other" })}
		}, exitUsage, "shards of different models"},
		{"another calibration", func(t *testing.T) []string {
			return []string{edit(t, 1, func(d map[string]any) {
				rv, _ := d["review"].(map[string]any)
				if rv == nil {
					rv = map[string]any{}
					d["review"] = rv
				}
				rv["calibration"] = map[string]any{"file": "/x/calibration.json", "digest": "sha256:other"}
			})}
		}, exitUsage, "shards of different doubt calibrations"},
		{"another top-N", func(t *testing.T) []string {
			return []string{edit(t, 2, func(d map[string]any) { d["config"].(map[string]any)["topn"] = 5 })}
		}, exitUsage, "topn"},
		{"another shard count", func(t *testing.T) []string {
			return []string{edit(t, 2, func(d map[string]any) { d["config"].(map[string]any)["shard"] = "2/4" })}
		}, exitUsage, "shards of different runs"},
		{"shard twice", func(t *testing.T) []string {
			dir := edit(t, 0, nil)
			b, _ := os.ReadFile(metas[0])
			os.WriteFile(filepath.Join(dir, "999999-999999_page-classification.json"), b, 0o644)
			return []string{dir}
		}, exitUsage, "the shards overlap"},
		{"unfinished shard", func(t *testing.T) []string {
			return []string{edit(t, 1, func(d map[string]any) { d["status"] = "running" })}
		}, cliflags.ExitIncomplete, "did not complete"},
		{"a row in two shards", func(t *testing.T) []string {
			dir := edit(t, 0, nil)
			tabs, _ := filepath.Glob(filepath.Join(dir, "*_v4.4_TOP-3.csv"))
			a, _ := os.ReadFile(tabs[0])
			b, _ := os.ReadFile(tabs[1])
			lines := strings.SplitAfter(string(a), "\n")
			os.WriteFile(tabs[1], append(b, lines[1]...), 0o644)
			return []string{dir}
		}, exitFailure, "the shards overlap"},
		{"not a shard", func(t *testing.T) []string {
			dir := t.TempDir()
			if code, log := e.run(t, "-d", e.in, "--results", dir); code != exitOK {
				t.Fatalf("exit %d: %s", code, log)
			}
			m, _ := filepath.Glob(filepath.Join(dir, "*_page-classification.json"))
			return m
		}, exitUsage, "not the run metadata of a shard"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			code, log := e.run(t, append([]string{"--merge", "--results", out}, c.args(t)...)...)
			if code != c.code || !strings.Contains(log, c.want) {
				t.Errorf("exit %d, want %d with %q: %s", code, c.code, c.want, log)
			}
			if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) > 0 {
				t.Errorf("files written by a refused merge (run metadata, tables): %v", m)
			}
		})
	}
}

// Shards run with different orientation models are refused.
func TestMergeRefusesOtherOrientationModel(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	shards := filepath.Join(e.root, "shards")
	for i := 0; i < 2; i++ {
		if code, log := e.run(t, "-d", e.in, "--results", shards, "--shard", fmt.Sprintf("%d/2", i)); code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, code, log)
		}
	}
	metas, _ := filepath.Glob(filepath.Join(shards, "*_page-classification.json"))
	var d map[string]any
	b, _ := os.ReadFile(metas[1])
	json.Unmarshal(b, &d)
	d["review"] = map[string]any{"rotation_model": map[string]any{"path": "/x", "digest": "sha256:other"}}
	b, _ = json.Marshal(d)
	os.WriteFile(metas[1], b, 0o644)
	code, log := e.run(t, "--merge", "--results", t.TempDir(), shards)
	if code != exitUsage || !strings.Contains(log, "different orientation models") {
		t.Errorf("exit %d: %s", code, log)
	}
}

// A merge whose first shard had an empty share (it loaded no model) still
// records the models, review and licence of the shards that ran them.
func TestMergeFirstShardEmpty(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := e.linkPages(t, 1)
	for _, p := range pages[1:] {
		os.Remove(p)
	}
	n := 2
	for (shard.Spec{Index: 0, Count: n}).Has(shard.Key(e.in, pages[0])) {
		n++
	}
	shards := filepath.Join(e.root, "shards")
	for i := 0; i < n; i++ {
		if code, log := e.run(t, "-d", e.in, "--results", shards, "--shard", fmt.Sprintf("%d/%d", i, n)); code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, code, log)
		}
	}
	merged := filepath.Join(e.root, "merged")
	if code, log := e.run(t, "--merge", "--results", merged, shards); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, log)
	}
	m, _ := filepath.Glob(filepath.Join(merged, "*_page-classification.json"))
	if len(m) != 1 {
		t.Fatalf("run metadata %v", m)
	}
	var d paradata.Document
	b, _ := os.ReadFile(m[0])
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Review["calibration"]; len(d.Models) != 1 || !ok || d.Statistics.SuccessfullyProcessed != 1 {
		t.Errorf("merged run metadata of %d shards (0/%d empty): models %v, review %v, %d processed",
			n, n, d.Models, d.Review, d.Statistics.SuccessfullyProcessed)
	}
}

// A shard run again with --retry-failed or --resume after it completed (as
// an Indexed Job retries an index, or an operator retries its failures)
// is merged from its latest run, and the merge still equals the one-shot
// run; a shard run again without continuing from the ledger is refused.
func TestMergeTakesContinuedShard(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	write(t, filepath.Join(e.in, "TEXT", "broken.png"), "not a png")
	whole := filepath.Join(e.root, "whole")
	if code, log := e.run(t, "-d", e.in, "--results", whole); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	shards := filepath.Join(e.root, "shards")
	for _, args := range [][]string{{"--shard", "0/2"}, {"--shard", "1/2"}, {"--shard", "1/2", "--retry-failed"}, {"--shard", "0/2", "--resume"}} {
		if code, log := e.run(t, append([]string{"-d", e.in, "--results", shards}, args...)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, log)
		}
	}
	merged := filepath.Join(e.root, "merged")
	if code, log := e.run(t, "--merge", "--results", merged, shards); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, log)
	}
	for _, suffix := range []string{"_v4.4_TOP-3.csv", "_" + FailuresTable} {
		got, want := tableRows(t, merged, suffix), tableRows(t, whole, suffix)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("merged %s differs from the one-shot run's:\n%s\nwant\n%s", suffix, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	m, _ := filepath.Glob(filepath.Join(merged, "*_page-classification.json"))
	var d paradata.Document
	b, _ := os.ReadFile(m[0])
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	list, _ := d.Config["merged_shards"].([]any)
	if len(list) != 2 || d.Statistics.SuccessfullyProcessed != 11 || d.Statistics.SkippedFiles != 1 {
		t.Fatalf("merged run metadata: %d shards, %d processed, %d skipped", len(list), d.Statistics.SuccessfullyProcessed, d.Statistics.SkippedFiles)
	}
	for _, s := range list {
		if sup, _ := s.(map[string]any)["supersedes"].([]any); len(sup) != 1 {
			t.Errorf("merged shard %v: supersedes %v, want the shard's first run", s.(map[string]any)["shard"], sup)
		}
	}

	// Shard 1 once more, classified anew: two independent runs of it.
	if code, log := e.run(t, "-d", e.in, "--results", shards, "--shard", "1/2"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	out := filepath.Join(e.root, "refused")
	code, log := e.run(t, "--merge", "--results", out, shards)
	if code != exitUsage || !strings.Contains(log, "the shards overlap") || !strings.Contains(log, "not run with --resume or --retry-failed") {
		t.Errorf("exit %d, want %d naming the overlap: %s", code, exitUsage, log)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*.csv")); len(m) > 0 {
		t.Errorf("tables written by a refused merge: %v", m)
	}
}

// A shard resumed over another input folder is not a continuation of the
// shard, and shards of two input lists are not one run: --merge refuses
// both, naming the runs (review1 F3: they were merged, exit 0, rows of
// two folders mixed).
func TestMergeRefusesOtherInput(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	// in2: the same number of pages (so shard_files_all agrees), one of
	// them under another name.
	in2 := filepath.Join(e.root, "in2")
	for i, p := range pages {
		rel, err := filepath.Rel(e.in, p)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			rel = filepath.Join(filepath.Dir(rel), "other-"+filepath.Base(rel))
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(in2, rel), string(b))
	}
	for _, c := range []struct {
		name string
		runs [][]string
	}{
		{"resumed over another folder", [][]string{{"-d", e.in, "--shard", "0/2"}, {"-d", e.in, "--shard", "1/2"}, {"-d", in2, "--shard", "0/2", "--resume"}}},
		{"shards of two folders", [][]string{{"-d", e.in, "--shard", "0/2"}, {"-d", in2, "--shard", "1/2"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			shards := filepath.Join(t.TempDir(), "shards")
			for _, args := range c.runs {
				if code, log := e.run(t, append(args, "--results", shards)...); code != exitOK {
					t.Fatalf("%v: exit %d: %s", args, code, log)
				}
			}
			out := filepath.Join(t.TempDir(), "merged")
			code, log := e.run(t, "--merge", "--results", out, shards)
			if code != exitUsage || !strings.Contains(log, "were cut from different input lists") ||
				!strings.Contains(log, e.in) || !strings.Contains(log, in2) {
				t.Errorf("exit %d, want %d naming both input folders: %s", code, exitUsage, log)
			}
			if m, _ := filepath.Glob(filepath.Join(out, "*.csv")); len(m) > 0 {
				t.Errorf("tables written by a refused merge: %v", m)
			}
		})
	}
}
