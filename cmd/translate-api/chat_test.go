package main

import (
	"net/http"
	"strings"
	"testing"

	"archivekit/internal/translate/chat/chattest"
)

// TestChatBackend: with TRANSLATION_BACKEND=chat_compatible the service is
// ready and /translate goes through the chat-completions stand-in.
func TestChatBackend(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	srv := chattest.New(chattest.Config{Key: "sk-svc"})
	defer srv.Close()
	_, ts := startServer(t, testEnv("http://127.0.0.1:1", map[string]string{"TRANSLATION_BACKEND": "chat_compatible",
		"LLM_BASE_URL": srv.BaseURL(), "LLM_MODEL": "m", "LLM_API_KEY": "sk-svc"}))
	small := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1" WIDTH="100" HEIGHT="100"><PrintSpace>
<TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="archeologický" HPOS="1" VPOS="1" WIDTH="10" HEIGHT="5"/><SP/><String CONTENT="výzkum" HPOS="12" VPOS="1" WIDTH="10" HEIGHT="5"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>`)
	body, ctype := multipartBody(t, part{Field: "file", Name: "p.alto.xml", File: true, Data: small}, part{Field: "source_lang", Data: []byte("cs")})
	resp := post(t, ts.URL+"/translate", ctype, body)
	out := readBody(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), `CONTENT="archaeological"`) {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	if srv.Posts.Load() == 0 {
		t.Fatal("no chat request")
	}
	r, err := http.Get(ts.URL + "/ready")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("ready: %v %v", r, err)
	}
	r.Body.Close()
}

// TestChatColdOnRefusedKey: a chat API that refuses the key leaves the
// service up (ready) with the deep health check reporting it.
func TestChatColdOnRefusedKey(t *testing.T) {
	srv := chattest.New(chattest.Config{Key: "sk-right"})
	defer srv.Close()
	_, ts := startServer(t, testEnv("http://127.0.0.1:1", map[string]string{"TRANSLATION_BACKEND": "chat_compatible",
		"LLM_BASE_URL": srv.BaseURL(), "LLM_MODEL": "m", "LLM_API_KEY": "sk-wrong"}))
	r, err := http.Get(ts.URL + "/health?deep=true")
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, r)
	if r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "LLM_API_KEY was refused") || strings.Contains(string(body), "sk-wrong") {
		t.Fatalf("deep health %d: %s", r.StatusCode, body)
	}
	// A translation then fails as the backend's failure, backend_error
	// (it was "internal", as if this service had failed).
	doc := []byte(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)
	mp, ctype := multipartBody(t, part{Field: "file", Name: "p.alto.xml", File: true, Data: doc}, part{Field: "source_lang", Data: []byte("cs")})
	resp := post(t, ts.URL+"/translate", ctype, mp)
	out := readBody(t, resp)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(out), `"reason":"backend_error"`) || strings.Contains(string(out), "sk-wrong") {
		t.Errorf("translation with the key refused: %d %s", resp.StatusCode, out)
	}
}
