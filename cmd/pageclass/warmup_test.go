package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auto warms the models up on a GPU only.
func TestWarmUpAuto(t *testing.T) {
	for _, c := range []struct {
		device, asked string
		on            bool
	}{{"cpu", "auto", false}, {"cpu", "", false}, {"cuda:0", "auto", true}, {"cuda:1", "", true}, {"cuda:0", "off", false}, {"cpu", "on", true}} {
		r := &runner{cli: &CLI{WarmUp: c.asked}, device: c.device}
		if got := r.warmUp(); got != c.on {
			t.Errorf("--warm-up %q on %s: %v, want %v", c.asked, c.device, got, c.on)
		}
	}
}

// --warm-up on classifies one batch of synthetic pages before the run's
// pages, logs it, records it, and changes no row; a run with the warm-up
// that fails after loading (a usage error found once the models are loaded)
// still closes every native handle (env.run checks). Whether closeModels
// waits for a warm-up still running is not told apart here: the test
// models warm up in milliseconds, before the error is found.
func TestWarmUpRun(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	e.linkPages(t, 1)
	tables := map[string][][]string{}
	for _, w := range []string{"off", "on"} {
		results := filepath.Join(e.root, "result-"+w)
		code, log := e.run(t, "-d", e.in, "--warm-up", w, "--results", results)
		if code != exitOK {
			t.Fatalf("--warm-up %s: exit %d\n%s", w, code, log)
		}
		if warmed := strings.Contains(log, `"msg":"models warmed up","pages":4,"batches":1`); warmed != (w == "on") {
			t.Errorf("--warm-up %s: warm-up record in the log %v:\n%s", w, warmed, log)
		}
		top, _ := filepath.Glob(filepath.Join(results, "*_TOP-3.csv"))
		meta, _ := filepath.Glob(filepath.Join(results, "*_page-classification.json"))
		if len(top) != 1 || len(meta) != 1 {
			t.Fatalf("--warm-up %s: tables %v, metadata %v", w, top, meta)
		}
		tables[w] = readCSV(t, top[0])
		var doc struct {
			Config map[string]any `json:"config"`
		}
		b, err := os.ReadFile(meta[0])
		if err != nil || json.Unmarshal(b, &doc) != nil {
			t.Fatalf("%s: %v", meta[0], err)
		}
		if doc.Config["warm_up"] != w {
			t.Errorf("--warm-up %s: config.warm_up %v", w, doc.Config["warm_up"])
		}
	}
	if len(tables["on"]) != len(tables["off"]) || len(tables["on"]) < 12 {
		t.Fatalf("%d rows with the warm-up, %d without", len(tables["on"]), len(tables["off"]))
	}
	for i := range tables["off"] {
		if strings.Join(tables["on"][i], ",") != strings.Join(tables["off"][i], ",") {
			t.Errorf("row %d: %v with the warm-up, %v without", i, tables["on"][i], tables["off"][i])
		}
	}
	bad := newEnv(t, map[string]string{"INPUT.chunk_size": "0"})
	bad.model(t, "v4.4")
	bad.linkPages(t, 1)
	if code, log := bad.run(t, "-d", bad.in, "--warm-up", "on", "--chunk"); code != exitUsage || !strings.Contains(log, "chunk_size") {
		t.Errorf("--chunk with chunk_size 0: exit %d\n%s", code, log)
	}
}
