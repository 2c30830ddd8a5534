package main

import (
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func readCSV(t *testing.T, p string) [][]string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestBakeoffOnSamples runs the bake-off on the real sample ALTO and records
// against the local stand-in of the MT API, once healthy and once failing.
func TestBakeoffOnSamples(t *testing.T) {
	altoFile := testenv.Path(t, "alto/MTX201501307_anon.alto.xml")
	records := testenv.Path(t, "records")
	fields := filepath.Join("..", "..", "setup", "translate", "amcr-fields.txt")
	api := translatortest.New(translatortest.Config{})
	defer api.Close()
	// A front that records the language pair of every translate request.
	var mu sync.Mutex
	var pairs []string
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			pairs = append(pairs, r.URL.Query().Get("src")+"-"+r.URL.Query().Get("tgt"))
			mu.Unlock()
		}
		api.Config.Handler.ServeHTTP(w, r)
	}))
	defer front.Close()
	env := map[string]string{"TRANSLATION_URL": front.URL, "MTAPI_MAX_RETRIES": "1", "MTAPI_BACKOFF_BASE_S": "0.001"}
	getenv := func(k string) string { return env[k] }

	dir := t.TempDir()
	refs := filepath.Join(dir, "refs.csv")
	os.WriteFile(refs, []byte("segment_id,reference\nMTX201501307_anon.alto.xml#Page1_Block2,Rescue archaeological research\nnowhere#x,unused\n"), 0o644)
	out := filepath.Join(dir, "bakeoff.csv")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--samples", altoFile + "," + records, "--backends", "mtapi", "--refs", refs,
		"--limit", "30", "--xpaths", fields, "--out", out}, getenv, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "1 references name no segment") {
		t.Errorf("stderr %q", stderr.String())
	}
	mu.Lock()
	if len(pairs) == 0 {
		t.Error("no translate request seen")
	}
	for _, p := range pairs {
		if strings.Contains(p, "auto") || !strings.HasSuffix(p, "-en") {
			t.Errorf("a request for the pair %q", p)
		}
	}
	mu.Unlock()
	recs := readCSV(t, out)
	if len(recs) != 31 {
		t.Fatalf("%d rows, want 30 + header", len(recs))
	}
	first := recs[1]
	if first[0] != "MTX201501307_anon.alto.xml#Page1_Block2" || first[3] != "cs" || first[5] != "ok" || first[18] != "rescue archaeological research" ||
		first[15] == "" || first[16] == "" {
		t.Errorf("first row %q", first)
	}
	if !strings.Contains(stdout.String(), "mtapi") || !strings.Contains(stdout.String(), "numbers kept") {
		t.Errorf("summary:\n%s", stdout.String())
	}

	// Metadata records give segments too.
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"--samples", records, "--xpaths", fields, "--src", "cs", "--out", out}, getenv, &stdout, &stderr); code != exitOK {
		t.Fatalf("records: exit %d %s", code, stderr.String())
	}
	recs = readCSV(t, out)
	if len(recs) < 2 || recs[1][2] != "metadata" || !strings.Contains(recs[1][0], ".xml#//arch:amcr/") {
		t.Errorf("records rows %q", recs[:2])
	}

	// A failing backend: every call recorded as an error, exit 3.
	bad := translatortest.New(translatortest.Config{FailAlways: 500})
	defer bad.Close()
	env["TRANSLATION_URL"] = bad.URL
	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), []string{"--samples", altoFile, "--limit", "3", "--src", "cs", "--out", out}, getenv, &stdout, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), "no backend call succeeded") {
		t.Fatalf("failing backend: exit %d %s", code, stderr.String())
	}
	for _, r := range readCSV(t, out)[1:] {
		if r[5] != "error" || !strings.Contains(r[6], "500") {
			t.Errorf("row %q", r)
		}
	}

	// One backend answers, the other fails every call: the table has both,
	// and the exit status says the comparison is incomplete.
	env["TRANSLATION_URL"] = front.URL
	env["LLM_BASE_URL"] = bad.URL + "/v1"
	env["LLM_MODEL"] = "stand-in"
	env["LLM_MAX_RETRIES"] = "1"
	env["LLM_BACKOFF_BASE_S"] = "0.001"
	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), []string{"--samples", altoFile, "--limit", "3", "--src", "cs", "--backends", "mtapi,chat_compatible", "--out", out}, getenv, &stdout, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), "every call to chat_compatible failed") {
		t.Fatalf("one failing backend: exit %d %s", code, stderr.String())
	}
	status := map[string]string{}
	for _, r := range readCSV(t, out)[1:] {
		status[r[4]] += r[5] + " "
	}
	if !strings.Contains(status["mtapi"], "ok") || strings.Contains(status["chat_compatible"], "ok") {
		t.Errorf("statuses per backend %q", status)
	}
}

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--samples is required"},
		{[]string{"--samples", "x", "--backends", "mtapi,mtapi"}, "named twice"},
		{[]string{"--samples", "x", "--backends", "deepl"}, "unknown backend"},
		{[]string{"--samples", "x", "--tgt", "auto"}, "--tgt must be a language code"},
		{[]string{"--samples", "/nonexistent/x", "--backends", "mtapi"}, "nonexistent"},
	} {
		var stdout, stderr bytes.Buffer
		env := map[string]string{"TRANSLATION_URL": "http://127.0.0.1:1"}
		if code := run(context.Background(), c.args, func(k string) string { return env[k] }, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d %q, want %q", c.args, code, stderr.String(), c.want)
		}
	}
}
