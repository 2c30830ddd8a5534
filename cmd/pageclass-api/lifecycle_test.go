package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/test/e2e/apitest"
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
	bin := apitest.Build(t, "pageclass-api")
	// A long batch wait makes the PDF slow: each chunk of 16 pages waits
	// for companions that never come.
	p := apitest.Start(t, bin, []string{"GRACEFUL_SHUTDOWN_S=10", "LOG_LEVEL=INFO", "LOG_FORMAT=json"},
		"-config", cfg, "-models", models, "-demo", "", "-batch-wait", "400ms")
	p.WaitReady(t, 60*time.Second)
	if !strings.Contains(p.Log(), `"model loaded"`) {
		t.Fatalf("no model load logged before ready:\n%s", p.Log())
	}

	type result struct {
		status int
		body   []byte
		err    error
	}
	done := make(chan result, 1)
	go func() {
		body, ct := multipartForm(t, upload{Field: "file", Name: "long.pdf", CType: "application/pdf", Data: makePDF(50)})
		resp, err := http.Post(p.Base+"/predict_document", ct, body)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- result{status: resp.StatusCode, body: b, err: err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(p.Base + "/health?deep=true")
		if err == nil {
			var h struct {
				InFlight int `json:"in_flight"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if h.InFlight > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the PDF request never showed in flight")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t0 := time.Now()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
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
	if r.err != nil || r.status != 200 {
		t.Fatalf("in-flight request: %v status %d body %.300s", r.err, r.status, r.body)
	}
	var doc struct {
		PageCount int `json:"page_count"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil || doc.PageCount != 50 {
		t.Fatalf("in-flight answer: %v %.200s", err, r.body)
	}
	if code := p.Wait(t, 15*time.Second); code != 143 {
		t.Fatalf("exit code %d, want 143\n%s", code, p.Log())
	}
	t.Logf("request finished and service stopped %v after SIGTERM", time.Since(t0).Round(time.Millisecond))
}
