package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestPlainBatch: a plain run sizes its batch by the GPU's memory only on a
// CUDA device when the user did not choose it; a chosen batch always wins
// and nothing is measured for it; a profile without figures keeps the
// configured batch.
func TestPlainBatch(t *testing.T) {
	tests := []struct {
		name       string
		device     string
		chosen     bool
		sized      int
		want       int
		wantSource string
		measured   bool
	}{
		{"CPU keeps the configured batch", "cpu", false, 96, 16, batchConfigured, false},
		{"GPU, not chosen: sized by memory", "cuda:0", false, 96, 96, batchMemory, true},
		{"GPU, second card", "cuda:1", false, 40, 40, batchMemory, true},
		{"GPU, chosen: the user's batch", "cuda:0", true, 96, 16, batchConfigured, false},
		{"GPU, profile without figures", "cuda:0", false, 0, 16, batchConfigured, true},
		{"CPU, chosen", "cpu", true, 96, 16, batchConfigured, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			measured := false
			got, source := plainBatch(tt.device, 16, tt.chosen, func() int { measured = true; return tt.sized })
			if got != tt.want || source != tt.wantSource || measured != tt.measured {
				t.Fatalf("plainBatch = %d, %s (measured %v), want %d, %s (measured %v)", got, source, measured, tt.want, tt.wantSource, tt.measured)
			}
		})
	}
}

// TestBatchChosen: the batch counts as the user's choice when --batch is
// given (also at the shipped 16) or [SETUP] batch is not the shipped 16;
// --batch beats the config file and reaches the settings every mode reads.
func TestBatchChosen(t *testing.T) {
	tests := []struct {
		name   string
		config string
		args   []string
		want   int
		chosen bool
	}{
		{"shipped 16", "16", nil, 16, false},
		{"config 8", "8", nil, 8, true},
		{"--batch 16 at the shipped 16", "16", []string{"--batch", "16"}, 16, true},
		{"--batch beats the config", "8", []string{"--batch=32"}, 32, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, map[string]string{"SETUP.batch": tt.config})
			var out bytes.Buffer
			p, code, done := parseArgs(append([]string{"--config", e.cfg, "-d", e.in}, tt.args...), &out, &out, plainUsage(&out))
			if done {
				t.Fatalf("exit %d: %s", code, out.String())
			}
			if p.settings.Setup.Batch != tt.want || p.cli.Batch != tt.want {
				t.Errorf("batch %d (settings), %d (flag), want %d", p.settings.Setup.Batch, p.cli.Batch, tt.want)
			}
			if got := batchChosen(p.cli.Given["batch"], p.settings.Setup.Batch); got != tt.chosen {
				t.Errorf("chosen %v, want %v", got, tt.chosen)
			}
		})
	}
	for _, args := range [][]string{{"--batch", "0"}, {"--batch", "4", "--merge", "x"}, {"--batch", "4", "--average", "-ap", "v4"}} {
		if c, code, msg := parseWith(t, nil, args...); c != nil || code != exitUsage || !strings.Contains(msg, "--batch") {
			t.Errorf("%q: exit %d, %q; want a usage error naming --batch", args, code, msg)
		}
	}
}

// TestBatchRecorded: a CPU run records the batch that ran and its source
// in the run metadata, and logs no GPU batch.
func TestBatchRecorded(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	mixedFolder(t, e)
	code, log := e.run(t, "-d", e.in, "--batch", "2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	d := readParadata(t, e)
	if d.Config["batch"] != 2.0 || d.Config["batch_source"] != batchConfigured {
		t.Errorf("config batch %v, batch_source %v; want 2, %s", d.Config["batch"], d.Config["batch_source"], batchConfigured)
	}
	if strings.Contains(log, "GPU batch") {
		t.Errorf("a CPU run logs a GPU batch: %s", log)
	}
	// The end record says where the time went: the host's start-up, the
	// models' calls and the share of the run with a batch in the models.
	var rec map[string]any
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"msg":"pages classified"`) {
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
		}
	}
	busy, _ := rec["model_busy"].(float64)
	first, _ := rec["first_batch_s"].(float64)
	call, _ := rec["first_call_s"].(float64)
	if n, _ := rec["batches"].(float64); n < 2 || busy <= 0 || busy > 1 || first <= 0 || call <= 0 || rec["call_mean_s"] == nil {
		t.Errorf("pages classified: %v; want batches >= 2, model_busy in (0, 1], first_batch_s, first_call_s and call_mean_s", rec)
	}
}
