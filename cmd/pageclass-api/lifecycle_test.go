package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/service/servicetest"
)

// TestLifecycleProcess runs the real binary: not ready while the models
// load, then ready; a 50-page PDF in flight when SIGTERM arrives still
// completes, new work is refused with 503, and the process exits 143 within
// the drain window.
func TestLifecycleProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the service")
	}
	models := classifytest.Ensemble(t, t.TempDir())
	cfg, _ := filepath.Abs("../../setup/config.txt")
	bin := servicetest.Build(t, "pageclass-api")
	// A long batch wait makes the PDF slow: each chunk of 16 pages waits
	// for companions that never come.
	p := servicetest.Start(t, bin, []string{"GRACEFUL_SHUTDOWN_S=10", "LOG_LEVEL=INFO", "LOG_FORMAT=json"},
		"-config", cfg, "-models", models, "-demo", "", "-batch-wait", "400ms")
	p.WaitReady(t, 60*time.Second)
	if !strings.Contains(p.Log(), `"model loaded"`) {
		t.Fatalf("no model load logged before ready:\n%s", p.Log())
	}

	done := servicetest.PostAsync(p.Base+"/predict_document", upload{Field: "file", Name: "long.pdf", CType: "application/pdf", Data: makePDF(50)})
	if !p.WaitInFlight(10 * time.Second) {
		t.Fatal("the PDF request never showed in flight")
	}
	t0 := p.Terminate(t)
	for _, path := range []string{"/ready", "/info"} {
		resp, err := http.Get(p.Base + path)
		if err != nil {
			t.Fatalf("%s during the drain: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s during the drain answered %d, want 503", path, resp.StatusCode)
		}
	}
	r := <-done
	if r.Err != nil || r.Status != 200 {
		t.Fatalf("in-flight request: %v status %d body %.300s", r.Err, r.Status, r.Body)
	}
	var doc struct {
		PageCount int `json:"page_count"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil || doc.PageCount != 50 {
		t.Fatalf("in-flight answer: %v %.200s", err, r.Body)
	}
	if code := p.Wait(t, 15*time.Second); code != 143 {
		t.Fatalf("exit code %d, want 143\n%s", code, p.Log())
	}
	t.Logf("request finished and service stopped %v after SIGTERM", time.Since(t0).Round(time.Millisecond))
}
