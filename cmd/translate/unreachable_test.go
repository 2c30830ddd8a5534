package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// TestUnreachableServiceStopsRun: with TRANSLATION_URL on a closed port, the
// first document fails at its first attempt (no backoff, even with retries
// configured) and the run stops there with a message naming the address
// and TRANSLATION_URL; the other documents are not tried.
func TestUnreachableServiceStopsRun(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	in := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "realworld", "v3_minimal.alto.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.alto.xml", "b.alto.xml", "c.alto.xml"} {
		if err := os.WriteFile(filepath.Join(in, n), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	e := env{"TRANSLATION_URL": url, "MTAPI_MAX_RETRIES": "4", "MTAPI_BACKOFF_BASE_S": "0.001",
		"LOG_FORMAT": "json", "TRANSLATE_PARA_CONFIG": paraConfig}
	r := runCLI(t, e, in, "-o", out, "-src", "cs", "--vocabulary", "")
	if r.code != exitFailure {
		t.Fatalf("exit %d, want %d:\n%s", r.code, exitFailure, r.stderr)
	}
	for _, want := range []string{url, "cannot be reached (connection refused)", "TRANSLATION_URL", "leaving 2 more input(s) untried"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("log does not say %q:\n%s", want, r.stderr)
		}
	}
	// One document was tried, once: one failure row, and the others were
	// never started.
	m, _ := filepath.Glob(filepath.Join(out, "*_translator_failures.csv"))
	if len(m) != 1 {
		t.Fatalf("%d failures tables", len(m))
	}
	b, _ := os.ReadFile(m[0])
	if rows := strings.Count(strings.TrimSpace(string(b)), "\n"); rows != 1 {
		t.Errorf("failures table has %d rows, want 1 (the first document only):\n%s", rows, b)
	}
	if n := strings.Count(r.stderr, `"msg":"skipped"`); n != 1 {
		t.Errorf("%d documents failed, want 1", n)
	}
}

// TestUnreachableLemmatiser: a lemmatiser on a closed port fails each call
// at its first attempt (LEMMATIZER_MAX_RETRIES notwithstanding), its
// circuit opens with a warning naming LEMMATIZER_URL, and the run goes on:
// it is not the translation service (exit 75: the document is written,
// not recorded, for a --resume once the lemmatiser is back).
func TestUnreachableLemmatiser(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	api := startAPI(t, translatortest.Config{})
	e := newEnv(api)
	e["LEMMATIZER_URL"] = url
	e["LEMMATIZER_MAX_RETRIES"] = "4"
	e["LEMMATIZER_BACKOFF_BASE_S"] = "60" // a retry would hold the test for minutes
	out := t.TempDir()
	r := runCLI(t, e, testenv.Path(t, sampleALTO), "-o", out, "-src", "cs", "--fast-align",
		"--vocabulary", testenv.Path(t, "vocabulary.csv"))
	if r.code != exitIncomplete {
		t.Fatalf("exit %d, want %d:\n%s", r.code, exitIncomplete, r.stderr)
	}
	if n := strings.Count(r.stderr, "not called again in this run"); n != 1 || !strings.Contains(r.stderr, "LEMMATIZER_URL") {
		t.Errorf("%d circuit warnings, LEMMATIZER_URL named: %v:\n%s", n, strings.Contains(r.stderr, "LEMMATIZER_URL"), r.stderr)
	}
}

// LEMMATIZER_URL=off: a vocabulary without a lemmatiser (an offline
// site): nothing is called, the run says single words are not protected,
// completes and is recorded (before, "off" was refused and an unset one
// sent text to the public lemmatiser, and offline every run exited 75).
func TestLemmatiserOff(t *testing.T) {
	api := startAPI(t, translatortest.Config{})
	e := newEnv(api)
	e["LEMMATIZER_URL"] = "off"
	out := t.TempDir()
	args := []string{testenv.Path(t, sampleALTO), "-o", out, "-src", "cs", "--fast-align", "--vocabulary", testenv.Path(t, "vocabulary.csv")}
	r := runCLI(t, e, args...)
	if r.code != exitOK || !strings.Contains(r.stderr, "LEMMATIZER_URL=off: no lemmatiser is called") {
		t.Fatalf("exit %d, want %d saying the lemmatiser is off:\n%s", r.code, exitOK, r.stderr)
	}
	if d := readParadata(t, out); d.Config["lemmatizer_url"] != "off" {
		t.Errorf("config.lemmatizer_url %v, want off", d.Config["lemmatizer_url"])
	}
	if r := runCLI(t, e, append(args, "--resume")...); r.code != exitOK || translated(t, r.stderr) != 0 {
		t.Errorf("--resume: exit %d, %d translated; want the run recorded: %s", r.code, translated(t, r.stderr), r.stderr)
	}
}
