package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"archivekit/internal/testenv"
)

// TestTranslationURLSetEmpty: TRANSLATION_URL set but empty (as from
// $(cat a-missing-file)) is a usage error naming it, before anything is
// written; it sent the documents to the public hosted service as if it
// were unset.
func TestTranslationURLSetEmpty(t *testing.T) {
	rec := testenv.Path(t, "records/C-9107617A.xml")
	out := filepath.Join(t.TempDir(), "out")
	e := env{"TRANSLATION_URL": "", "LOG_FORMAT": "json", "TRANSLATE_PARA_CONFIG": paraConfig}
	var stdout, stderr bytes.Buffer
	code := runIn(context.Background(), recordArgs(rec, out), func(k string) (string, bool) { v, ok := e[k]; return v, ok }, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "TRANSLATION_URL is set but empty") {
		t.Errorf("exit %d, want %d naming TRANSLATION_URL:\n%s", code, exitUsage, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the output folder was made")
	}
}

// TestTranslationURLCredentials: a TRANSLATION_URL with Basic credentials
// that the service refuses (401, its answer echoing the Authorization
// header) shows neither the password nor the encoded credentials in the
// log, the failures table, the run metadata or the ledger; they were in
// each.
func TestTranslationURLCredentials(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		http.Error(w, "denied: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	defer srv.Close()
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	rec := recordsTree(t, recs[:3])
	out := t.TempDir()
	e := env{"TRANSLATION_URL": strings.Replace(srv.URL, "http://", "http://bob:PASSWORD99@", 1), "MTAPI_MAX_RETRIES": "0",
		"LOG_FORMAT": "json", "TRANSLATE_PARA_CONFIG": paraConfig}
	r := runCLI(t, e, recordArgs(rec, out)...)
	if !strings.Contains(r.stderr, "401") {
		t.Fatalf("exit %d without the 401:\n%s", r.code, r.stderr)
	}
	// Refused credentials stop the run at the first input (every file
	// was tried, each refused alike), saying what to check.
	if r.code != exitFailure || posts.Load() != 1 || !strings.Contains(r.stderr, "refused this program: HTTP 401") ||
		!strings.Contains(r.stderr, "are the credentials in TRANSLATION_URL right?") {
		t.Errorf("exit %d after %d requests, want %d after one, saying the credentials were refused:\n%s", r.code, posts.Load(), exitFailure, r.stderr)
	}
	secrets := []string{"PASSWORD99", "Ym9iOlBBU1NXT1JEOTk="}
	for _, s := range secrets {
		if strings.Contains(r.stderr, s) {
			t.Errorf("the log shows %s", s)
		}
	}
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %s", path, s)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
