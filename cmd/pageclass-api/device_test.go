package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"archivekit/bindings/torch"
)

// --device auto (the CUDA image's default) picks cuda:0 only where a CUDA
// GPU is usable and otherwise runs on the CPU, saying so in the log; other
// values are left alone.
func TestResolveDevice(t *testing.T) {
	gpu := torch.CUDAAvailable()
	cases := []struct{ in, want, log string }{
		{"cpu", "cpu", ""},
		{"cuda:1", "cuda:1", ""},
		{"auto", map[bool]string{true: "cuda:0", false: "cpu"}[gpu],
			map[bool]string{true: "a CUDA GPU is available", false: "the CPU"}[gpu]},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		e := &engine{opt: engineOptions{Device: c.in, Log: slog.New(slog.NewJSONHandler(&buf, nil))}}
		e.resolveDevice()
		if e.opt.Device != c.want {
			t.Errorf("%s: device %q, want %q", c.in, e.opt.Device, c.want)
		}
		if c.log == "" && buf.Len() > 0 {
			t.Errorf("%s: unexpected log %s", c.in, buf.String())
		}
		if c.log != "" && !strings.Contains(buf.String(), c.log) {
			t.Errorf("%s: log %q lacks %q", c.in, buf.String(), c.log)
		}
	}
}
