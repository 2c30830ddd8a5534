package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/translator/translatortest"
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
	bin := servicetest.Build(t, "translate-api")
	para, _ := filepath.Abs("../../setup/translate/para_config.txt")
	p := servicetest.Start(t, bin, []string{"TRANSLATION_URL=" + mt.URL, "TRANSLATE_PARA_CONFIG=" + para,
		"GRACEFUL_SHUTDOWN_S=10", "LOG_LEVEL=INFO", "LOG_FORMAT=json"})
	p.WaitReady(t, 30*time.Second)

	small := []byte(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)
	done := servicetest.PostAsync(p.Base+"/translate", part{Field: "file", Name: "slow.alto.xml", File: true, Data: small}, part{Field: "source_lang", Data: []byte("cs")})
	// Wait until the request is in flight.
	if !p.WaitInFlight(5 * time.Second) {
		t.Fatal("the slow request never showed in flight")
	}
	t0 := p.Terminate(t)
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
	if r.Err != nil || r.Status != 200 || !strings.Contains(string(r.Body), `CONTENT="grave"`) {
		t.Fatalf("in-flight request: %v status %d body %.300s", r.Err, r.Status, r.Body)
	}
	if code := p.Wait(t, 15*time.Second); code != 143 {
		t.Fatalf("exit code %d, want 143\n%s", code, p.Log())
	}
	if el := time.Since(t0); el > 10*time.Second {
		t.Fatalf("stopping took %v, over the 10 s drain window", el)
	}
	t.Logf("stopped %v after SIGTERM", time.Since(t0).Round(time.Millisecond))
}

// TestAnswersWhileWarmingUp: translate-api listens while it warms up (here
// held on the MT service's model list), as its specification's rules have
// it: /health 200 ok, /ready and the deep check 503 "starting", work 503
// with Retry-After; then ready, and a translation succeeds.
func TestAnswersWhileWarmingUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the service")
	}
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	mt := translatortest.New(translatortest.Config{HoldModels: func() {
		select {
		case held <- struct{}{}:
		default:
		}
		<-release
	}})
	defer mt.Close()
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	defer open()
	bin := servicetest.Build(t, "translate-api")
	para, _ := filepath.Abs("../../setup/translate/para_config.txt")
	p := servicetest.Start(t, bin, []string{"TRANSLATION_URL=" + mt.URL, "TRANSLATE_PARA_CONFIG=" + para, "LOG_FORMAT=json"})
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatalf("warm-up never asked for the model list:\n%s", p.Log())
	}
	get := func(path string) (int, http.Header, string) {
		t.Helper()
		resp, err := http.Get(p.Base + path)
		if err != nil {
			t.Fatalf("GET %s while warming up: %v (the listener should be open)", path, err)
		}
		return resp.StatusCode, resp.Header, string(readBody(t, resp))
	}
	if code, _, body := get("/health"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("/health while warming up: %d %s", code, body)
	}
	if code, _, body := get("/ready"); code != 503 || !strings.Contains(body, "starting") {
		t.Errorf("/ready while warming up: %d %s", code, body)
	}
	if code, _, body := get("/health?deep=true"); code != 503 || !strings.Contains(body, "warming up") {
		t.Errorf("/health?deep=true while warming up: %d %s", code, body)
	}
	code, body := servicetest.PostForm(t, p.Base+"/translate", part{Field: "file", Name: "a.alto.xml", File: true, Data: []byte("<alto/>")})
	if code != 503 || !strings.Contains(string(body), "starting") {
		t.Errorf("POST /translate while warming up: %d %s", code, body)
	}
	open()
	p.WaitReady(t, 30*time.Second)
	small := []byte(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)
	code, body = servicetest.PostForm(t, p.Base+"/translate", part{Field: "file", Name: "a.alto.xml", File: true, Data: small}, part{Field: "source_lang", Data: []byte("cs")})
	if code != 200 || !strings.Contains(string(body), `CONTENT="grave"`) {
		t.Errorf("POST /translate once ready: %d %.300s", code, body)
	}
}
