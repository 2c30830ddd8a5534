package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
)

// TestClientsJobs, on SQLite and PostgreSQL: with API_TOKENS_FILE each
// client sees its own jobs only. Another client's job answers 404
// job_not_found, as a job that does not exist, to its status, results,
// item and cancel; GET /jobs lists the client's own jobs; the same
// Idempotency-Key from two clients makes two jobs. Before, every client
// saw, and could cancel, every job.
func TestClientsJobs(t *testing.T) { stores(t, testClientsJobs) }

func testClientsJobs(t *testing.T, newStore store) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice tok-a\nbob tok-b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := storeEnv(newStore(t))
	env["LOG_LEVEL"], env["API_TOKENS_FILE"] = "ERROR", tokens
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	svc, err := service.New(service.Options{Name: "echo-api", DefaultMaxUploadMB: 10, LookupEnv: lookup, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, "{}")
	})
	q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: h, CallbackBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	send := func(method, path, token, key string, parts ...servicetest.Part) (int, []byte) {
		t.Helper()
		var body io.Reader
		ctype := ""
		if len(parts) > 0 {
			body, ctype = servicetest.Multipart(t, parts...)
		}
		req, _ := http.NewRequest(method, ts.URL+path, body)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, servicetest.ReadBody(t, resp)
	}
	submitAs := func(token, key string) string {
		t.Helper()
		code, b := send("POST", "/jobs", token, key, file("a.xml", "<a/>"))
		var st jobs.Status
		if code >= 300 || json.Unmarshal(b, &st) != nil {
			t.Fatalf("POST /jobs as %s: %d %s", token, code, b)
		}
		return st.ID
	}
	alice := submitAs("tok-a", "k1")
	bob := submitAs("tok-b", "k1")
	if alice == bob {
		t.Fatal("the same Idempotency-Key from two clients gave one job")
	}
	for _, path := range []string{"/jobs/" + alice, "/jobs/" + alice + "/results", "/jobs/" + alice + "/results/0"} {
		deadline := time.Now().Add(20 * time.Second)
		for {
			code, b := send("GET", path, "tok-a", "")
			if code == 200 || time.Now().After(deadline) {
				if code != 200 {
					t.Errorf("alice GET %s: %d %s", path, code, b)
				}
				break
			}
			<-time.After(50 * time.Millisecond) // the item has not run yet (409)
		}
		if code, b := send("GET", path, "tok-b", ""); code != 404 || !strings.Contains(string(b), "job_not_found") {
			t.Errorf("bob GET %s: %d %s, want 404 job_not_found", path, code, b)
		}
	}
	if code, b := send("DELETE", "/jobs/"+alice, "tok-b", ""); code != 404 {
		t.Errorf("bob DELETE alice's job: %d %s, want 404", code, b)
	}
	for who, want := range map[string]string{"tok-a": alice, "tok-b": bob} {
		var page jobs.Page
		code, b := send("GET", "/jobs", who, "")
		if code != 200 || json.Unmarshal(b, &page) != nil || len(page.Jobs) != 1 || page.Jobs[0].ID != want {
			t.Errorf("GET /jobs as %s: %d %s, want its own job %s only", who, code, b, want)
		}
	}
}
