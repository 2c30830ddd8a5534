package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"archivekit/bindings/torch"
)

// --precision on the CPU: auto and fp32 are fp32, tf32 runs as fp32 with a
// log line saying so, bf16 is bf16, fp16 is a usage error naming CUDA.
func TestPickPrecisionOnCPU(t *testing.T) {
	for _, c := range []struct {
		asked string
		want  torch.Precision
		note  string
		err   string
	}{
		{"auto", torch.FP32, "", ""},
		{"", torch.FP32, "", ""},
		{"fp32", torch.FP32, "", ""},
		{"tf32", torch.FP32, "on the CPU it is fp32", ""},
		{"bf16", torch.BF16, "", ""},
		{"fp16", 0, "", "runs on CUDA only"},
	} {
		var log bytes.Buffer
		r := &runner{cli: &CLI{Precision: c.asked}, device: "cpu", log: slog.New(slog.NewTextHandler(&log, nil))}
		err := r.pickPrecision()
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("--precision %s: %v, want an error saying %q", c.asked, err, c.err)
			}
		case err != nil:
			t.Errorf("--precision %s: %v", c.asked, err)
		case r.precision != c.want:
			t.Errorf("--precision %s: %v, want %v", c.asked, r.precision, c.want)
		case c.note != "" && !strings.Contains(log.String(), c.note):
			t.Errorf("--precision %s: log %q lacks %q", c.asked, log.String(), c.note)
		}
	}
}

// --gpu-streams sets the shim's stream pool for the process: one turns it
// off, pool (the default) on.
func TestPickGPUStreams(t *testing.T) {
	defer torch.SetCUDAStreamPool(true)
	for _, c := range []struct {
		asked  string
		pooled bool
	}{{"one", false}, {"pool", true}, {"one", false}, {"", true}} {
		r := &runner{cli: &CLI{GPUStreams: c.asked}, device: "cpu", log: slog.New(slog.DiscardHandler)}
		if err := r.pickPrecision(); err != nil {
			t.Fatal(err)
		}
		if got := torch.CUDAStreamPool(); got != c.pooled {
			t.Errorf("--gpu-streams %q: stream pool %v, want %v", c.asked, got, c.pooled)
		}
	}
}

// --jit-optimize sets the shim's graph optimisation for the process: off
// turns it off, on on, auto (the default) on on the CPU and off on CUDA.
func TestPickJITOptimize(t *testing.T) {
	defer torch.SetGraphOptimize(true)
	for _, c := range []struct {
		asked string
		on    bool
	}{{"off", false}, {"on", true}, {"off", false}, {"auto", true}, {"off", false}, {"", true}} {
		r := &runner{cli: &CLI{JITOptimize: c.asked}, device: "cpu", log: slog.New(slog.DiscardHandler)}
		if err := r.pickPrecision(); err != nil {
			t.Fatal(err)
		}
		if got := torch.GraphOptimize(); got != c.on {
			t.Errorf("--jit-optimize %q: graph optimisation %v, want %v", c.asked, got, c.on)
		}
	}
}

// auto resolves by device: a GPU runs its graphs as scripted.
func TestJITOptimizeAuto(t *testing.T) {
	for _, c := range []struct {
		device, asked string
		on            bool
	}{{"cpu", "auto", true}, {"cuda:0", "auto", false}, {"cuda:1", "", false}, {"cuda:0", "on", true}, {"cpu", "off", false}} {
		r := &runner{cli: &CLI{JITOptimize: c.asked}, device: c.device}
		if got := r.jitOptimize(); got != c.on {
			t.Errorf("--jit-optimize %q on %s: %v, want %v", c.asked, c.device, got, c.on)
		}
	}
}
