package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/translator/translatortest"
)

// TestSummaryLevel: the summary that ends a document's log
// ("MTX201501307_anon: batch summary: ...") is logged at INFO when it
// counts nothing that needs attention and at WARN when it does (here: the
// service lost the line breaks of every batch), as translate logs it;
// before, translate-api logged it at INFO whatever it counted.
func TestSummaryLevel(t *testing.T) {
	alto := readFile(t, sharedData(t, "translator/alto/MTX201501307_anon.alto.xml"))
	for _, tc := range []struct {
		name string
		cfg  translatortest.Config
		want string
	}{
		{"clean", translatortest.Config{}, "INFO"},
		{"line counts lost", translatortest.Config{Garbage: func(in string) string { return strings.ReplaceAll(in, "\n", " ") }}, "WARN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mt := translatortest.New(tc.cfg)
			defer mt.Close()
			env := testEnv(mt.URL, map[string]string{"LOG_LEVEL": "INFO", "LOG_FORMAT": "json"})
			var logs bytes.Buffer
			s, err := newServer(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &logs)
			if err != nil {
				t.Fatal(err)
			}
			ts := servicetest.Serve(t, s.svc, s.close)
			body, ct := multipartBody(t, part{Field: "file", Name: "MTX201501307_anon.alto.xml", File: true, Data: alto},
				part{Field: "source_lang", Data: []byte("cs")})
			resp := post(t, ts.URL+"/translate", ct, body)
			if got := readBody(t, resp); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %.300s", resp.StatusCode, got)
			}
			level := ""
			for _, line := range strings.Split(logs.String(), "\n") {
				var rec struct{ Level, Msg string }
				if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec.Msg, "MTX201501307_anon: batch summary: ") {
					level = rec.Level
				}
			}
			if level != tc.want {
				t.Errorf("summary logged at %q, want %q:\n%.2000s", level, tc.want, logs.String())
			}
		})
	}
}
