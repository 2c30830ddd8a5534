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
	"testing"
	"time"

	"archivekit/internal/translate/vocab"
	"archivekit/internal/translate/vocabharvest"
)

// servers starts an OAI-PMH stand-in with two pages (the second answering
// 503 when failSecond) and a GraphQL stand-in with one page.
func servers(t *testing.T, failSecond bool) (oai, gql string) {
	rec := func(id, cs, en string) string {
		return `<record><header><identifier>urn:` + id + `</identifier></header><metadata><a:amcr xmlns:a="urn:amcr"><a:heslo><a:ident_cely>` + id +
			`</a:ident_cely><a:heslo>` + cs + `</a:heslo><a:heslo_en>` + en + `</a:heslo_en></a:heslo></a:amcr></metadata></record>`
	}
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, tok := rec("HES-1", "hrob", "grave"), "p2/+"
		if r.URL.Query().Get("resumptionToken") == "p2/+" {
			if failSecond {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
				return
			}
			body, tok = rec("HES-2", "jáma", "pit"), ""
		}
		fmt.Fprintf(w, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords>%s<resumptionToken>%s</resumptionToken></ListRecords></OAI-PMH>`, body, tok)
	}))
	g := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":{"concepts":{"nodes":[{"id":"T1","uri":"urn:T1","labels":[{"lang":"cs","value":"hrob"},{"lang":"en","value":"tomb"}]},
 {"id":"T2","uri":"urn:T2","labels":[{"lang":"cs","value":"mohyla"},{"lang":"en","value":"barrow"}]}],"pageInfo":{"hasNextPage":false}}}}`)
	}))
	t.Cleanup(o.Close)
	t.Cleanup(g.Close)
	return o.URL, g.URL
}

func TestLoadVocab(t *testing.T) {
	oai, gql := servers(t, false)
	failing, _ := servers(t, true)
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		terms   string // lemmas in the file, "" when none is written
		sleeps  int
		errText string
	}{
		{"both sources", []string{"--arch-url", oai, "--thesaurus-url", gql, "--delay", "0.75"}, exitOK, "hrob=grave,jáma=pit,mohyla=barrow", 2, ""},
		{"skip thesaurus", []string{"--arch-url", oai, "--skip-thesaurus", "--delay", "0.75"}, exitOK, "hrob=grave,jáma=pit", 1, ""},
		{"skip arch", []string{"--thesaurus-url", gql, "--skip-arch"}, exitOK, "hrob=tomb,mohyla=barrow", 0, ""},
		{"later page fails", []string{"--arch-url", failing, "--thesaurus-url", gql, "--delay", "0.75"}, exitPartial, "hrob=grave,mohyla=barrow", 2,
			"records source: failed after 1 page(s)"},
		{"both skipped", []string{"--skip-arch", "--skip-thesaurus"}, exitUsage, "", 0, "nothing to harvest"},
		{"no thesaurus endpoint", []string{"--arch-url", oai}, exitUsage, "", 0, "no thesaurus endpoint"},
		{"nothing harvested", []string{"--arch-url", "http://127.0.0.1:1/oai", "--skip-thesaurus"}, exitUsage, "", 0, "no terms harvested"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "vocabulary.csv")
			var stdout, stderr bytes.Buffer
			var slept []time.Duration
			code := run(context.Background(), append(tc.args, "--out", out), noEnv, &stdout, &stderr, func(h *vocabharvest.Harvester) {
				h.Sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
			})
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.errText) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.errText)
			}
			if len(slept) != tc.sleeps {
				t.Errorf("%d delays, want %d", len(slept), tc.sleeps)
			}
			for _, d := range slept {
				if d != 750*time.Millisecond {
					t.Errorf("delay %v, want 750ms", d)
				}
			}
			if tc.terms == "" {
				if _, err := os.Stat(out); err == nil {
					t.Error("a file was written")
				}
				return
			}
			v, err := vocab.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range v.Entries {
				got = append(got, e.Source+"="+e.Target)
			}
			if strings.Join(got, ",") != tc.terms || len(v.Skipped) > 0 {
				t.Errorf("terms %v (skipped %v), want %s", got, v.Skipped, tc.terms)
			}
		})
	}
}

// TestEnvEndpoints: the endpoints can come from the environment.
func TestEnvEndpoints(t *testing.T) {
	oai, gql := servers(t, false)
	env := map[string]string{"LOAD_VOCAB_ARCH_URL": oai, "LOAD_VOCAB_THESAURUS_URL": gql}
	out := filepath.Join(t.TempDir(), "v.csv")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--out", out, "--delay", "0"}, func(k string) string { return env[k] }, &stdout, &stderr, nil); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "3 terms (1 duplicates dropped, records source first), 3 requests") {
		t.Errorf("stdout %q", stdout.String())
	}
}
