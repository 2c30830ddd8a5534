package main

import (
	"archivekit/internal/testenv"
	"archivekit/internal/translate/chat/chattest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChatBackend runs the command with --backend chat_compatible against a
// local chat-completions stand-in that requires a key: the record is
// translated, the run metadata names the model, the provider label and the
// chat_provider licence component, and the key appears in no output.
func TestChatBackend(t *testing.T) {
	const key = "sk-test-7f3a9c"
	srv := chattest.New(chattest.Config{Key: key})
	t.Cleanup(srv.Close)
	record := testenv.Path(t, "records/C-9107617A.xml")
	out := t.TempDir()
	e := env{"LLM_BASE_URL": srv.BaseURL(), "LLM_MODEL": "local-test", "LLM_API_KEY": key, "LLM_PROVIDER": "local stand-in",
		"LLM_LANGUAGES": "cs,en", "LOG_FORMAT": "json", "TRANSLATE_PARA_CONFIG": paraConfig}
	r := runCLI(t, e, record, "--backend", "chat_compatible", "-src", "cs", "-o", out, "--xpaths", "../../setup/translate/amcr-fields.txt",
		"--vocabulary", testenv.Path(t, "vocabulary.csv"))
	if r.code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if srv.Posts.Load() == 0 {
		t.Fatal("no chat request made")
	}
	for _, q := range srv.Requests() {
		if q.Model != "local-test" || q.Temperature == nil || *q.Temperature != 0 {
			t.Fatalf("request %+v", q)
		}
	}
	d := readParadata(t, out)
	if d.Config["llm_provider"] != "local stand-in" || d.Config["llm_model"] != "local-test" || d.Config["llm_api_key_set"] != true {
		t.Errorf("run metadata config %v", d.Config)
	}
	if d.Statistics.SegmentStatus["ok"] == 0 {
		t.Errorf("segment statuses %v", d.Statistics.SegmentStatus)
	}
	if tm := d.Statistics.Terminology; tm == nil || tm.HitRate == nil || tm.Documents["C-9107617A"].Expected == 0 {
		t.Errorf("terminology %+v", d.Statistics.Terminology)
	} else {
		t.Logf("terminology: %d of %d expected terms (rate %.3f)", tm.Hit, tm.Expected, *tm.HitRate)
	}
	found := false
	for _, c := range d.LicenseDetail.Components {
		found = found || c.Name == "chat_provider"
	}
	if !found {
		t.Errorf("chat_provider not among the licence components %+v", d.LicenseDetail.Components)
	}
	if strings.Contains(r.stderr+r.out, key) {
		t.Error("the API key is in the log")
	}
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), key) {
			t.Errorf("the API key is written into %s", f)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "C-9107617A_en.xml"))
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(record)
	if string(b) == string(src) {
		t.Fatal("output equals input")
	}
}

// TestChatRefusedPair: a source language outside LLM_LANGUAGES is an error
// naming the pair.
func TestChatRefusedPair(t *testing.T) {
	srv := chattest.New(chattest.Config{})
	t.Cleanup(srv.Close)
	out := t.TempDir()
	e := env{"LLM_BASE_URL": srv.BaseURL(), "LLM_MODEL": "m", "LLM_LANGUAGES": "de,en", "LOG_FORMAT": "json", "TRANSLATE_PARA_CONFIG": paraConfig}
	r := runCLI(t, e, testenv.Path(t, "records/C-9107617A.xml"), "--backend", "chat_compatible", "-src", "cs", "-o", out,
		"--xpaths", "../../setup/translate/amcr-fields.txt", "--vocabulary", "")
	// Refused before any document: a usage error naming the pair.
	if r.code != exitUsage || !strings.Contains(r.stderr, "--source_lang/--target_lang: source language cs, target language en: chat_compatible: language pair cs-en is not offered") || srv.Posts.Load() != 0 {
		t.Fatalf("exit %d, %d posts; stderr:\n%s", r.code, srv.Posts.Load(), r.stderr)
	}
}
