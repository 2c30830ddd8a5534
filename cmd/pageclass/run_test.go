package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/paradata"
)

// readParadata reads the run metadata of the run.
func readParadata(t *testing.T, e *env) paradata.Document {
	t.Helper()
	var d paradata.Document
	b, err := os.ReadFile(e.output(t, "_page-classification.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// paradataSummary is the part of the run metadata that does not depend on
// the clock or the machine, for golden comparison.
func paradataSummary(t *testing.T, d paradata.Document) []byte {
	t.Helper()
	var outs []string
	for _, o := range d.Outputs {
		outs = append(outs, stampless(filepath.Base(o)))
	}
	var skipped []paradata.Skipped
	for _, s := range d.SkippedFilesDetail {
		skipped = append(skipped, paradata.Skipped{File: filepath.Base(s.File), Reason: s.Reason[strings.LastIndex(s.Reason, ":")+1:]})
	}
	var models []string
	for _, m := range d.Models {
		models = append(models, m.Revision+" demo="+strconv.FormatBool(m.Demo))
	}
	b, err := json.MarshalIndent(map[string]any{
		"program": d.Program, "status": d.Status, "error": d.Error, "license": d.License,
		"determined_by": d.LicenseDetail.DeterminedBy, "demo_ensemble": d.DemoEnsemble, "models": models,
		"inputs": d.Statistics.InputFilesTotal, "processed": d.Statistics.SuccessfullyProcessed,
		"skipped": d.Statistics.SkippedFiles, "skipped_detail": skipped, "counts": d.Statistics.OutputCountsByType,
		"outputs": outs, "topn": d.Config["topn"], "review_calibrated": d.Review["calibration"] != nil,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// stampless replaces the leading YYMMDD-HHMMSS stamp of an output name.
func stampless(name string) string {
	if len(name) > 13 && name[6] == '-' && name[13] == '_' {
		return "{stamp}" + name[13:]
	}
	return name
}

func TestSingleModelGolden(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 2)
	e.model(t, "v4.4")
	code, log := e.run(t, "-d", e.in, "--raw")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	top := e.output(t, "_v4.4_TOP-3.csv")
	goldenFile(t, "single_TOP-3.csv", top)
	goldenFile(t, "single_RAW.csv", e.output(t, "_v4.4_RAW.csv"))
	goldenFile(t, "single_REVIEW.csv", e.output(t, "_v4.4_REVIEW.csv"))
	golden(t, "single_paradata.json", paradataSummary(t, readParadata(t, e)))
	recs := readCSV(t, top)
	// Two pages of each category, one row each (every sample category has
	// at least two pages).
	if len(pages) != 2*len(modelmeta.Categories) || len(recs)-1 != len(pages) {
		t.Errorf("%d rows for %d pages, want one per page and %d pages", len(recs)-1, len(pages), 2*len(modelmeta.Categories))
	}
	if recs[1][0] != "DRAW/atrium-34" || recs[1][1] != "" || recs[1][len(recs[1])-1] != "DRAW/atrium-34.png" {
		t.Errorf("first row %v, want DRAW/atrium-34, no page, SOURCE DRAW/atrium-34.png", recs[1])
	}
}

func TestTop1HasCategoryColumn(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v2.4")
	code, log := e.run(t, "-d", e.in, "-tn", "1", "-rev", "v2.4")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	path := e.output(t, "_v2.4_TOP-1.csv")
	goldenFile(t, "single_TOP-1.csv", path)
	recs := readCSV(t, path)
	if strings.Join(recs[0], ",") != "FILE,PAGE,CLASS-1,SCORE-1,CATEGORY,SOURCE" {
		t.Fatalf("header %v", recs[0])
	}
	for _, r := range recs[1:] {
		if r[4] != r[2] {
			t.Errorf("CATEGORY %q differs from CLASS-1 %q", r[4], r[2])
		}
	}
}

// --best writes the per-model Top-1 table and the averaged table; the
// averaged scores are the mean of the five single-model tables.
func TestBestGoldenAndMean(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 2)
	classifytest.Ensemble(t, e.models)
	code, log := e.run(t, "-d", e.in, "--best", "--raw", "--save-intermediates", "-tn", "11")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	goldenFile(t, "best_TOP-1.csv", e.output(t, "_BEST_5_models_TOP-1.csv"))
	goldenFile(t, "best_AVG_TOP-11.csv", e.output(t, "_BEST_5_models_AVG_TOP-11.csv"))
	goldenFile(t, "best_AVG_RAW.csv", e.output(t, "_BEST_5_models_AVG_RAW.csv"))
	goldenFile(t, "best_AVG_REVIEW.csv", e.output(t, "_BEST_5_models_AVG_REVIEW.csv"))
	golden(t, "best_paradata.json", paradataSummary(t, readParadata(t, e)))

	avg := readCSV(t, e.output(t, "_BEST_5_models_AVG_RAW.csv"))
	var singles [][][]string
	for _, rev := range registry.Ensemble {
		singles = append(singles, readCSV(t, e.output(t, "_"+rev+"_RAW.csv")))
	}
	for i := 1; i < len(avg); i++ {
		for c := 2; c < len(avg[i])-1; c++ { // the scores, not SOURCE
			sum := 0.0
			for _, s := range singles {
				if s[i][0] != avg[i][0] || s[i][1] != avg[i][1] {
					t.Fatalf("row %d: %v vs %v", i, s[i][:2], avg[i][:2])
				}
				sum += cell(t, s[i][c])
			}
			// Each single cell is rounded to 4 decimals: the mean of five
			// rounded cells is within 0.5e-4 of the mean of the exact ones.
			if got := cell(t, avg[i][c]); math.Abs(got-sum/5) > 1e-4 {
				t.Fatalf("row %s class %s: average %v, mean of singles %v", avg[i][0], avg[0][c], got, sum/5)
			}
		}
	}
	top1 := readCSV(t, e.output(t, "_BEST_5_models_TOP-1.csv"))
	for i := 1; i < len(top1); i++ {
		for m := range registry.Ensemble {
			single := readCSV(t, e.output(t, "_"+registry.Ensemble[m]+"_TOP-11.csv"))
			if top1[i][2+m] != single[i][2] {
				t.Fatalf("row %d model %s: BEST Top-1 %q, own table %q", i, registry.Ensemble[m], top1[i][2+m], single[i][2])
			}
		}
	}
}

func cell(t *testing.T, s string) float64 {
	t.Helper()
	if s == "" {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNoAverageBest(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	classifytest.Ensemble(t, e.models)
	code, log := e.run(t, "-d", e.in, "--best", "--no-average-best")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	e.output(t, "_BEST_5_models_TOP-1.csv")
	if m, _ := filepath.Glob(filepath.Join(e.results, "*AVG*")); len(m) != 0 {
		t.Errorf("averaged table written: %v", m)
	}
	if m, _ := filepath.Glob(filepath.Join(e.results, "*_v1.4_TOP-3.csv")); len(m) != 0 {
		t.Errorf("intermediate table written without --save-intermediates: %v", m)
	}
}

// A corrupt file in the middle of a folder is skipped and recorded; every
// other row is what it is without it.
func TestCorruptFileInFolder(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	if code, log := e.run(t, "-d", e.in, "--raw"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	clean := readCSV(t, e.output(t, "_RAW.csv"))
	os.RemoveAll(e.results)
	write(t, filepath.Join(e.in, "LINE_P", "broken-7.png"), "\x89PNG\r\n\x1a\ntruncated")
	code, log := e.run(t, "-d", e.in, "--raw")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	got := readCSV(t, e.output(t, "_RAW.csv"))
	if strings.Join(flat(got), "|") != strings.Join(flat(clean), "|") {
		t.Errorf("rows changed by a corrupt file:\n%v\nwant\n%v", got, clean)
	}
	d := readParadata(t, e)
	if d.Status != paradata.StatusCompleted || d.Statistics.SkippedFiles != 1 || len(d.SkippedFilesDetail) != 1 ||
		!strings.HasSuffix(d.SkippedFilesDetail[0].File, "broken-7.png") || d.Statistics.SuccessfullyProcessed != len(clean)-1 {
		t.Errorf("paradata %+v %+v", d.Statistics, d.SkippedFilesDetail)
	}
	if !strings.Contains(log, "broken-7.png") {
		t.Errorf("log does not name the corrupt file:\n%s", log)
	}
}

func flat(recs [][]string) []string {
	var out []string
	for _, r := range recs {
		out = append(out, strings.Join(r, ","))
	}
	return out
}

// A chunked re-run finds the earlier file and adds no duplicate rows; a file
// added between the runs is appended once.
func TestChunkedRerun(t *testing.T) {
	e := newEnv(t, map[string]string{"INPUT.chunk_size": "3"})
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	extra := pages[0]
	os.Remove(extra)
	if code, log := e.run(t, "-d", e.in, "--chunk"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	path := e.output(t, "_v4.4_TOP-3.csv")
	first := readCSV(t, path)
	if len(first) != len(pages) { // header + all but one
		t.Fatalf("%d lines, want %d", len(first), len(pages))
	}
	if code, log := e.run(t, "-d", e.in, "--chunk"); code != exitOK {
		t.Fatalf("second run: exit %d: %s", code, log)
	} else if !strings.Contains(log, "continuing from the ledger") {
		t.Errorf("second run did not continue:\n%s", log)
	}
	if got := readCSV(t, e.output(t, "_v4.4_TOP-3.csv")); strings.Join(flat(got), "|") != strings.Join(flat(first), "|") {
		t.Fatalf("re-run changed the table:\n%v\nwant\n%v", got, first)
	}
	if err := os.Symlink(filepath.Join(classifytest.PagesDir(t), "DRAW", filepath.Base(extra)), extra); err != nil {
		t.Fatal(err)
	}
	if code, log := e.run(t, "-d", e.in, "--chunk"); code != exitOK {
		t.Fatalf("third run: exit %d: %s", code, log)
	}
	got := readCSV(t, path)
	if len(got) != len(pages)+1 {
		t.Fatalf("%d lines after adding a file, want %d", len(got), len(pages)+1)
	}
	seen := map[string]bool{}
	for _, r := range got[1:] {
		k := r[0] + "/" + r[1]
		if seen[k] {
			t.Fatalf("duplicate row %s", k)
		}
		seen[k] = true
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name string
		cfg  map[string]string
		prep func(t *testing.T, e *env)
		args func(e *env) []string
		code int
		want string
	}{
		{"no input", nil, nil, func(e *env) []string { return nil }, exitNoInput, "no input"},
		{"missing folder", nil, nil, func(e *env) []string { return []string{"-d", filepath.Join(e.root, "nope")} }, exitNoInput, "give -d an existing folder"},
		{"empty folder", nil, func(t *testing.T, e *env) { mkdir(t, e.in) }, func(e *env) []string { return []string{"--dir"} }, exitNoInput, "no .png files"},
		{"missing model", nil, func(t *testing.T, e *env) { e.linkPages(t, 1) }, func(e *env) []string { return []string{"--dir"} }, exitFailure, "model_v44"},
		{"parallel without GPU", nil, nil, func(e *env) []string { return []string{"--dir", "--best", "--parallel"} }, exitUsage, "--parallel needs a CUDA GPU"},
		{"hub without repository", nil, func(t *testing.T, e *env) { e.linkPages(t, 1) }, func(e *env) []string { return []string{"--dir", "--hub"} }, exitUsage, "[HUB] repo_name"},
		{"all pages unreadable", nil, func(t *testing.T, e *env) {
			e.model(t, "v4.4")
			write(t, filepath.Join(e.in, "a.png"), "not a png")
		}, func(e *env) []string { return []string{"--dir"} }, exitFailure, "no page was classified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.cfg)
			if tt.prep != nil {
				tt.prep(t, e)
			}
			code, log := e.run(t, tt.args(e)...)
			if code != tt.code || !strings.Contains(log, tt.want) {
				t.Fatalf("exit %d (want %d), log lacks %q:\n%s", code, tt.code, tt.want, log)
			}
			// No input is said as translate says it: "no input", the
			// cause in error (it was the whole message).
			if code == exitNoInput && tt.args(e) != nil && !strings.Contains(log, `"level":"ERROR","msg":"no input","error":`) {
				t.Errorf("no input not said as translate says it:\n%s", log)
			}
			// Nothing to classify leaves no trace, as in translate (the
			// results folder and a failed run metadata were left).
			if code == exitNoInput {
				if _, err := os.Stat(e.results); !os.IsNotExist(err) {
					entries, _ := os.ReadDir(e.results)
					t.Errorf("the results folder is there (%v): %v", err, entries)
				}
			}
		})
	}
}

// A run that fails part-way still leaves complete run metadata saying so.
func TestParadataOnFailure(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	write(t, filepath.Join(e.models, "model_v44", "model.pt"), "corrupt weights")
	code, log := e.run(t, "--dir")
	if code != exitFailure {
		t.Fatalf("exit %d: %s", code, log)
	}
	d := readParadata(t, e)
	if d.Status != paradata.StatusFailed || !strings.Contains(d.Error, "model.pt") || d.License != "MIT" {
		t.Errorf("status %q error %q license %q", d.Status, d.Error, d.License)
	}
}

func TestFastClsAndDemoEnsemble(t *testing.T) {
	t.Run("fastcls", func(t *testing.T) {
		e := newEnv(t, nil)
		e.linkPages(t, 1)
		copyDir(t, filepath.Join(shippedDemo(t), "fastcls_small"), filepath.Join(e.models, "fastcls_small"))
		code, log := e.run(t, "--dir", "--fastcls", "-rev", "v1.4")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, log)
		}
		e.output(t, "_fastcls_small_TOP-3.csv")
		// Spec 2.9: the fast-classifier component (AGPL-3.0) counts; the
		// shipped weights' own CC BY-NC 4.0 (trained on the sample pages)
		// ranks above it.
		d := readParadata(t, e)
		agpl := false
		for _, c := range d.LicenseDetail.Components {
			agpl = agpl || (c.Name == "fastcls_library" && c.ID == "AGPL-3.0")
		}
		if d.License != "CC BY-NC 4.0" || !agpl || strings.Join(d.LicenseDetail.DeterminedBy, ",") != "model fastcls_small" {
			t.Errorf("licence %q determined by %v, AGPL component counted: %v", d.License, d.LicenseDetail.DeterminedBy, agpl)
		}
	})
	t.Run("demo ensemble", func(t *testing.T) {
		// The shipped default models folder (not a given location) lacks
		// the models: the demo ensemble answers.
		e := newEnv(t, map[string]string{"OUTPUT.FOLDER_MODELS": "./model"})
		e.linkPages(t, 1)
		demo := classifytest.Ensemble(t, filepath.Join(e.root, "weights", "demo"))
		code, log := e.run(t, "--dir", "--best", "--demo-weights", demo)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, log)
		}
		if !strings.Contains(log, "demo ensemble") || !strings.Contains(log, "WARN") {
			t.Errorf("no demo warning:\n%s", log)
		}
		d := readParadata(t, e)
		if !d.DemoEnsemble || !d.Demo || len(d.Models) != 5 || !d.Models[0].Demo {
			t.Errorf("demo not recorded: %+v", d.Models)
		}
		if d.License != "CC BY-NC 4.0" {
			t.Errorf("licence %q, want the demo weights' CC BY-NC 4.0", d.License)
		}
	})
}

// Two --chunk runs of the same tables take turns: while one writes them
// (paused here after its first file), the other waits without touching
// them, then continues from the ledger, and the tables hold every row once.
// Before, both appended to the same files at once, and a run stopped after
// the other had finished left its rows twice in the finished tables.
func TestChunkRunsTakeTurns(t *testing.T) {
	e := newEnv(t, map[string]string{"INPUT.chunk_size": "1"})
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	type result struct {
		code int
		log  string
	}
	paused, resume := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	fileHook = func(string) {
		if held.CompareAndSwap(false, true) { // the first file of the first run
			close(paused)
			<-resume
		}
	}
	waiting := make(chan string, 1)
	chunkWaitHook = func(lock string) { waiting <- lock }
	defer func() { fileHook, chunkWaitHook = nil, nil }()
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		code, log := e.runCtx(t, context.Background(), "-d", e.in, "--chunk")
		first <- result{code, log}
	}()
	<-paused
	table := e.output(t, "_TOP-3.csv")
	before, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		code, log := e.runCtx(t, context.Background(), "-d", e.in, "--chunk")
		second <- result{code, log}
	}()
	select {
	case <-waiting:
	case r := <-second:
		close(resume)
		<-first
		t.Fatalf("the second run did not wait for the first (exit %d): %s", r.code, r.log)
	}
	if now, err := os.ReadFile(table); err != nil || !bytes.Equal(now, before) {
		t.Errorf("the waiting run touched the table (%v):\n%s\nwant\n%s", err, now, before)
	}
	close(resume)
	a := <-first
	if a.code != exitOK {
		t.Fatalf("first run: exit %d: %s", a.code, a.log)
	}
	b := <-second
	if b.code != exitOK {
		t.Fatalf("second run: exit %d: %s", b.code, b.log)
	}
	if n := toClassify(t, b.log); n != 0 {
		t.Errorf("the second run classified %d files, want 0 (all in the ledger)", n)
	}
	// The waiting run names the one it waits for, as --resume's do.
	if holder := fmt.Sprintf(`"holder":"pageclass process %d of `, os.Getpid()); !strings.Contains(b.log, holder) {
		t.Errorf("the waiting run does not name the run holding the tables (%s...):\n%s", holder, b.log)
	}
	// The tables of an uninterrupted run, alone.
	ref := filepath.Join(e.root, "alone")
	if code, log := e.run(t, "-d", e.in, "--results", ref); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	want, err := os.ReadFile(tableIn(t, ref, "_TOP-3.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if now, err := os.ReadFile(table); err != nil || !bytes.Equal(now, want) {
		t.Errorf("table after both runs (%v):\n%s\nwant\n%s", err, now, want)
	}
}

// TestNoRunMetadataWithoutInput: a run whose input is not there fails
// before it writes anything; before, it left a run-metadata file of a run
// that never started.
func TestNoRunMetadataWithoutInput(t *testing.T) {
	for _, args := range [][]string{{"-d", "nope"}, {"-f", "nope.png"}, {}} {
		e := newEnv(t, nil)
		for i, a := range args {
			if i == 1 {
				args[i] = filepath.Join(e.root, a)
			}
		}
		code, log := e.run(t, args...)
		if code != exitNoInput {
			t.Fatalf("%q: exit %d: %s", args, code, log)
		}
		if entries, err := os.ReadDir(e.results); !os.IsNotExist(err) {
			t.Errorf("%q: the results folder holds %d entries (%v), want no folder", args, len(entries), err)
		}
		if strings.Contains(log, "run metadata written") {
			t.Errorf("%q: %s", args, log)
		}
	}
}
