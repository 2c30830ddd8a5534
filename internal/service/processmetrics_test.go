package service

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProcessMetrics: /metrics has the gauges a standard dashboard looks
// for, the version the service runs, when its process started and its
// resident memory (a restart or a roll-out showed only as counters
// falling to zero).
func TestProcessMetrics(t *testing.T) {
	svc, _, _ := testService(t, env{}, Options{Version: "0.1.0-test"})
	var b strings.Builder
	if err := svc.Metrics.Write(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if !strings.Contains(text, "# TYPE service_build_info gauge\n") || !strings.Contains(text, `service_build_info{version="0.1.0-test"} 1`+"\n") {
		t.Errorf("no build info:\n%s", text)
	}
	for _, c := range []struct {
		name     string
		min, max float64
	}{
		{"process_start_time_seconds", float64(time.Now().Add(-time.Hour).Unix()), float64(time.Now().Add(time.Minute).Unix())},
		{"process_resident_memory_bytes", 1 << 20, 1 << 40},
	} {
		m := regexp.MustCompile(`(?m)^` + c.name + ` (\S+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("no %s:\n%s", c.name, text)
			continue
		}
		if v, err := strconv.ParseFloat(m[1], 64); err != nil || v < c.min || v > c.max {
			t.Errorf("%s = %s, want from %g to %g", c.name, m[1], c.min, c.max)
		}
	}
}
