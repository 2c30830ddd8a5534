package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/transport"
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

// TestLogLevelSetEmpty: LOG_LEVEL set but empty is a usage error naming
// it, as in pageclass and the services; translate ran at INFO.
func TestLogLevelSetEmpty(t *testing.T) {
	rec := testenv.Path(t, "records/C-9107617A.xml")
	out := filepath.Join(t.TempDir(), "out")
	e := env{"LOG_LEVEL": " ", "TRANSLATE_PARA_CONFIG": paraConfig}
	var stdout, stderr bytes.Buffer
	code := runIn(context.Background(), recordArgs(rec, out), func(k string) (string, bool) { v, ok := e[k]; return v, ok }, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "LOG_LEVEL is set but empty") {
		t.Errorf("exit %d, want %d naming LOG_LEVEL:\n%s", code, exitUsage, stderr.String())
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

// TestServiceErrorQuotingText: a translation service whose error answers
// quote the text they were sent (a 400 repeating input_text, a 500's
// stack trace) does not get the document's text, personal data among it,
// into the log, the run metadata, the failures table or the ledger (it
// was in each, verbatim).
func TestServiceErrorQuotingText(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusInternalServerError} {
		var mu sync.Mutex
		var sent []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				http.NotFound(w, r)
				return
			}
			text := r.FormValue("input_text")
			mu.Lock()
			sent = append(sent, text)
			mu.Unlock()
			msg := fmt.Sprintf("Bad request: cannot translate input_text=%q", text)
			if status == http.StatusInternalServerError {
				msg = "Traceback (most recent call last):\n  File \"/srv/mt/app.py\", line 42\n    model.translate('" + text + "')\nValueError"
			}
			http.Error(w, msg, status)
		}))
		rec := testenv.Path(t, "records/C-9107617A.xml")
		out := t.TempDir()
		e := env{"TRANSLATION_URL": srv.URL, "MTAPI_MAX_RETRIES": "0", "LOG_FORMAT": "json", "LOG_LEVEL": "debug", "TRANSLATE_PARA_CONFIG": paraConfig}
		r := runCLI(t, e, recordArgs(rec, out)...)
		srv.Close()
		if len(sent) == 0 {
			t.Fatalf("%d: nothing sent: exit %d\n%s", status, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "[text sent]") {
			t.Errorf("%d: the log does not say the text sent was taken out:\n%s", status, r.stderr)
		}
		var lines []string
		for _, s := range sent {
			for _, l := range strings.Split(s, "\n") {
				if l = strings.TrimSpace(l); len([]rune(l)) >= 8 {
					lines = append(lines, l)
				}
			}
		}
		check := func(where, text string) {
			for _, l := range lines {
				if strings.Contains(text, l) {
					t.Errorf("%d: %s holds the text sent %q", status, where, l)
				}
			}
		}
		check("the log", r.stderr)
		err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			check(path, string(b))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestTranslationURLFromConfig: the configuration file's translation_url
// names the translation API as TRANSLATION_URL does, and wins over it as
// translation_backend wins over TRANSLATION_BACKEND (a cron job, which
// loses the shell's environment, sent the text to the public service);
// public_services = refuse refuses the public service with no address
// set, and cannot undo the environment's refuse.
func TestTranslationURLFromConfig(t *testing.T) {
	rec := testenv.Path(t, "records/C-9107617A.xml")
	api := startAPI(t, translatortest.Config{})
	other := startAPI(t, translatortest.Config{})
	dir := t.TempDir()
	cfg := func(text string) string {
		p := filepath.Join(dir, fmt.Sprintf("cfg%d.txt", len(text)))
		writeFile(t, p, []byte(text))
		return p
	}
	e := newEnv(other) // TRANSLATION_URL names the other server
	out := filepath.Join(dir, "out1")
	r := runCLI(t, e, recordArgs(rec, out, "-c", cfg("translation_url = "+api.URL+"\n"))...)
	if r.code != exitOK || len(api.Inputs()) == 0 || len(other.Inputs()) != 0 {
		t.Fatalf("exit %d, %d calls to the configuration's API, %d to TRANSLATION_URL's:\n%s", r.code, len(api.Inputs()), len(other.Inputs()), r.stderr)
	}
	if !strings.Contains(r.stderr, "and TRANSLATION_URL name different translation APIs: the configuration's is used") {
		t.Errorf("the two addresses are not said:\n%s", r.stderr)
	}
	// No address anywhere and public_services = refuse: refused before
	// any text leaves.
	delete(e, "TRANSLATION_URL")
	r = runCLI(t, e, recordArgs(rec, filepath.Join(dir, "out2"), "-c", cfg("public_services = refuse\n"))...)
	if r.code == exitOK || !strings.Contains(r.stderr, "TRANSLATE_PUBLIC_SERVICES") {
		t.Errorf("public_services = refuse: exit %d:\n%s", r.code, r.stderr)
	}
	e[transport.EnvPublicServices] = "refuse"
	r = runCLI(t, e, recordArgs(rec, filepath.Join(dir, "out3"), "-c", cfg("public_services = allow\n"))...)
	if r.code == exitOK || !strings.Contains(r.stderr, "TRANSLATE_PUBLIC_SERVICES") {
		t.Errorf("public_services = allow under the environment's refuse: exit %d:\n%s", r.code, r.stderr)
	}
	// A cron job's whole set-up in the file, nothing in the environment:
	// the API, the public services refused and the lemmatiser off (the
	// file could not say off: with refuse and no lemmatiser the run
	// refused to start, naming only the variable).
	delete(e, transport.EnvPublicServices)
	r = runCLI(t, e, recordArgs(rec, filepath.Join(dir, "out4"), "-c", cfg("translation_url = "+api.URL+"\npublic_services = refuse\n"))...)
	// The error says the file refused the public lemmatiser (it named
	// TRANSLATE_PUBLIC_SERVICES, which was never set) and names its keys.
	if r.code == exitOK || !strings.Contains(r.stderr, "lemmatizer_url = off") || !strings.Contains(r.stderr, "public_services = refuse in ") ||
		strings.Contains(r.stderr, "TRANSLATE_PUBLIC_SERVICES=refuse") {
		t.Errorf("refuse without a lemmatiser: exit %d, want the file's refusal and the configuration key named:\n%s", r.code, r.stderr)
	}
	r = runCLI(t, e, recordArgs(rec, filepath.Join(dir, "out5"), "-c", cfg("translation_url = "+api.URL+"\npublic_services = refuse\nlemmatizer_url = off\n"))...)
	if r.code != exitOK {
		t.Errorf("translation_url, public_services = refuse and lemmatizer_url = off: exit %d:\n%s", r.code, r.stderr)
	}
}

// TestDownloadFolderPlantedLink: a download folder that another user
// planted as a link (in a shared output folder) is not followed: the
// download fails naming it, and the files of the folder it names are left
// as they were (the download replaced one of them).
func TestDownloadFolderPlantedLink(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("a link of another user needs root to make")
	}
	rec := readOrFatal(t, testenv.Path(t, "records/C-9107617A.xml"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(rec) }))
	defer srv.Close()
	out, victim := t.TempDir(), t.TempDir()
	mine := filepath.Join(victim, "C-9107617A.xml")
	writeFile(t, mine, []byte("MY OWN NOTES"))
	link := filepath.Join(out, "downloaded_inputs")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	api := startAPI(t, translatortest.Config{})
	r := runCLI(t, newEnv(api), srv.URL+"/C-9107617A.xml", "-o", out, "--formats", "xml", "--xpaths", "../../setup/translate/amcr-fields.txt", "--vocabulary", "", "-src", "cs")
	if b, _ := os.ReadFile(mine); string(b) != "MY OWN NOTES" {
		t.Errorf("the file of the linked folder was replaced: %d bytes now (exit %d)", len(b), r.code)
	}
	if !strings.Contains(r.stderr, "is a symbolic link that user 65534 made") {
		t.Errorf("the planted link is not named:\n%s", r.stderr)
	}
}
