package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/translate/translator/translatortest"
	"archivekit/test/e2e/apitest"
)

// TestLifecycleProcess runs the real binary: not ready, then ready; a slow
// translation in flight when SIGTERM arrives still completes, new work is
// refused with 503, and the process exits 143 within the drain window.
func TestLifecycleProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the service")
	}
	mt := translatortest.New(translatortest.Config{Delay: 1500 * time.Millisecond})
	defer mt.Close()
	bin := apitest.Build(t, "translate-api")
	para, _ := filepath.Abs("../../setup/translate/para_config.txt")
	p := apitest.Start(t, bin, []string{"TRANSLATION_URL=" + mt.URL, "TRANSLATE_PARA_CONFIG=" + para,
		"GRACEFUL_SHUTDOWN_S=10", "LOG_LEVEL=INFO", "LOG_FORMAT=json"})
	p.WaitReady(t, 30*time.Second)

	small := []byte(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)
	type result struct {
		status int
		body   []byte
		err    error
	}
	done := make(chan result, 1)
	go func() {
		body, ct := multipartBody(t, part{Field: "file", Name: "slow.alto.xml", File: true, Data: small}, part{Field: "source_lang", Data: []byte("cs")})
		resp, err := http.Post(p.Base+"/translate", ct, body)
		if err != nil {
			done <- result{err: err}
			return
		}
		b := readBody(t, resp)
		done <- result{status: resp.StatusCode, body: b}
	}()
	// Wait until the request is in flight.
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(p.Base + "/health?deep=true")
		if err == nil {
			var h struct {
				InFlight int `json:"in_flight"`
			}
			_ = json.Unmarshal(readBody(t, resp), &h)
			if h.InFlight > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow request never showed in flight")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t0 := time.Now()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	for _, probe := range []struct {
		method, path string
	}{{"GET", "/ready"}, {"GET", "/info"}, {"POST", "/translate"}} {
		req, _ := http.NewRequest(probe.method, p.Base+probe.path, strings.NewReader(""))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s during the drain: %v", probe.path, err)
		}
		readBody(t, resp)
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s %s during the drain answered %d, want 503", probe.method, probe.path, resp.StatusCode)
		}
	}
	r := <-done
	if r.err != nil || r.status != 200 || !strings.Contains(string(r.body), `CONTENT="grave"`) {
		t.Fatalf("in-flight request: %v status %d body %.300s", r.err, r.status, r.body)
	}
	if code := p.Wait(t, 15*time.Second); code != 143 {
		t.Fatalf("exit code %d, want 143\n%s", code, p.Log())
	}
	if el := time.Since(t0); el > 10*time.Second {
		t.Fatalf("stopping took %v, over the 10 s drain window", el)
	}
	t.Logf("stopped %v after SIGTERM", time.Since(t0).Round(time.Millisecond))
}
