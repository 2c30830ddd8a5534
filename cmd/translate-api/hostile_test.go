package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/service/servicetest"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// cpuSeconds is the user+system CPU time of this process so far.
func cpuSeconds(t *testing.T) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Skip(err)
	}
	tv := func(v syscall.Timeval) float64 { return float64(v.Sec) + float64(v.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// nested is a metadata-like document of depth nested elements.
func nested(depth int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?>` + "\n")
	for range depth {
		b.WriteString(`<arch:amcr xmlns:arch="https://api.aiscr.cz/schema/amcr/2.2/">`)
	}
	b.WriteString("<arch:dokument><arch:popis>hrob</arch:popis></arch:dokument>")
	for range depth {
		b.WriteString("</arch:amcr>")
	}
	return b.Bytes()
}

// longLines is an ALTO page with one block of lines lines of words words.
func longLines(lines, words int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?>` + "\n" + `<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1">`)
	for l := range lines {
		fmt.Fprintf(&b, `<TextLine ID="l%d">`, l)
		for w := range words {
			fmt.Fprintf(&b, `<String CONTENT="slovo%d"/><SP/>`, w%97)
		}
		b.WriteString("</TextLine>")
	}
	b.WriteString("</TextBlock></PrintSpace></Page></Layout></alto>")
	return b.Bytes()
}

// manyFields is a record with n translated fields.
func manyFields(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?>` + "\n" + `<arch:amcr xmlns:arch="https://api.aiscr.cz/schema/amcr/2.2/">`)
	for range n {
		b.WriteString("<arch:dokument><arch:popis>hrob a sídliště</arch:popis></arch:dokument>\n")
	}
	b.WriteString("</arch:amcr>")
	return b.Bytes()
}

// TestHostileDocumentsBoundedWork sends documents small on the wire and
// large in work, and logs the CPU time of each; those over a work limit
// are refused with 422 naming the limit, the others are translated.
func TestHostileDocumentsBoundedWork(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	flat := append(append([]byte(`<?xml version="1.0"?>`+"\n<r>"), bytes.Repeat([]byte("<a/>"), 1_100_000)...), "</r>"...)
	for _, tc := range []struct {
		name, file string
		data       []byte
		status     int
		want       string // in the detail of an error, in the log of a success
	}{
		{"50,000 nested elements", "deep.xml", nested(50_000), 422, "nesting depth limit of 256"},
		{"250 nested elements", "deep250.xml", nested(250), 200, ""},
		{"1.1 million empty elements", "flat.xml", flat, 422, "node count limit of 1000000"},
		{"6,000 fields", "fields.xml", manyFields(6000), 422, "translated field count limit of 5000"},
		{"ALTO block of 2 lines of 20,000 words", "long.alto.xml", longLines(2, 20_000), 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, ct := multipartBody(t, part{Field: "file", Name: tc.file, File: true, Data: tc.data}, part{Field: "source_lang", Data: []byte("cs")})
			cpu0, t0 := cpuSeconds(t), time.Now()
			resp := post(t, ts.URL+"/translate", ct, body)
			b := readBody(t, resp)
			t.Logf("%s (%d bytes): %d in %.2f s wall, %.2f CPU-s", tc.name, len(tc.data), resp.StatusCode, time.Since(t0).Seconds(), cpuSeconds(t)-cpu0)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tc.status, b)
			}
			if tc.status != http.StatusOK && !strings.Contains(string(b), tc.want) {
				t.Errorf("detail %.300s lacks %q", b, tc.want)
			}
		})
	}
}

// TestDeepHealthShowsUnreadableFieldList: /health?deep=true names a field
// list that cannot be read, while ALTO requests still work.
func TestDeepHealthShowsUnreadableFieldList(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"AMCR_FIELDS_PATH": filepath.Join(t.TempDir(), "missing.txt")}))
	resp, err := http.Get(ts.URL + "/health?deep=true")
	if err != nil {
		t.Fatal(err)
	}
	b := readBody(t, resp)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "field list cannot be read") || !strings.Contains(string(b), "missing.txt") {
		t.Errorf("deep health %d: %s", resp.StatusCode, b)
	}
	// The start-up log says it too (it said nothing).
	var logs servicetest.LogBuffer
	env := testEnv(mt.URL, map[string]string{"AMCR_FIELDS_PATH": filepath.Join(t.TempDir(), "missing.txt")})
	s, err := newServer(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &logs)
	if err != nil {
		t.Fatal(err)
	}
	servicetest.Serve(t, s.svc, s.close)
	if l := logs.String(); !strings.Contains(l, `"level":"WARN"`) || !strings.Contains(l, "AMCR_FIELDS_PATH") || !strings.Contains(l, "missing.txt") {
		t.Errorf("the start-up log does not name the unreadable field list:\n%s", l)
	}
}

// BenchmarkLargeDocumentMemory translates a dense ALTO of 24,000 lines of
// 20 words (984,000 nodes, just under the parse limit; 16 MB) with an
// instant stand-in backend and reports the resident memory above the warm
// service at its peak and after the answer (returned at once for
// documents over 4 MB).
//
//	go test -run '^$' -bench LargeDocumentMemory -benchtime 1x ./cmd/translate-api
func BenchmarkLargeDocumentMemory(b *testing.B) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	s, ts := startServer(b, testEnv(mt.URL, nil))
	doc := longLines(24_000, 20)
	body, ct := multipartBody(b, part{Field: "file", Name: "big.alto.xml", File: true, Data: doc}, part{Field: "source_lang", Data: []byte("cs")})
	raw := body.Bytes()
	for range b.N {
		runtime.GC()
		debug.FreeOSMemory()
		warm, err := testenv.RSSKiB()
		if err != nil {
			b.Skip(err)
		}
		_ = testenv.ResetPeak()
		resp := post(b, ts.URL+"/translate", ct, bytes.NewReader(raw))
		out := readBody(b, resp)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d: %.200s", resp.StatusCode, out)
		}
		peak, _ := testenv.PeakRSSKiB()
		for s.svc.InFlight() > 0 { // the handler returns memory after answering
			time.Sleep(10 * time.Millisecond)
		}
		after, _ := testenv.RSSKiB()
		b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
		b.ReportMetric(float64(peak-warm)/1024, "peak-MiB")
		b.ReportMetric(float64(after-warm)/1024, "after-MiB")
	}
}

// TestMisSetFieldListIsNotQuoted: AMCR_FIELDS_PATH pointing at a file that
// is not a field list (here a token file) is named, with its line, in the
// 422 of a metadata request and in /health?deep=true; its content is not.
func TestMisSetFieldListIsNotQuoted(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	const secret = "ghp_S3cretT0kenThatMustNotLeak"
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"AMCR_FIELDS_PATH": path}))
	body, ct := multipartBody(t, part{Field: "file", Name: "r.xml", File: true, Data: nested(1)})
	resp := post(t, ts.URL+"/translate?is_alto=false", ct, body)
	b := readBody(t, resp)
	if resp.StatusCode != http.StatusUnprocessableEntity || strings.Contains(string(b), secret) || !strings.Contains(string(b), path+":1") {
		t.Errorf("metadata request %d: %s", resp.StatusCode, b)
	}
	resp, err := http.Get(ts.URL + "/health?deep=true")
	if err != nil {
		t.Fatal(err)
	}
	b = readBody(t, resp)
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), path+":1") {
		t.Errorf("deep health %d: %s", resp.StatusCode, b)
	}
}

// TestHostedDefaultNotice: with TRANSLATION_URL unset the service says, in
// one log line naming the host, that text goes to the public hosted API;
// with it set, it says nothing of the kind.
func TestHostedDefaultNotice(t *testing.T) {
	for _, tc := range []struct {
		url    string
		notice bool
	}{{"", true}, {"http://127.0.0.1:9", false}} {
		env := testEnv(tc.url, nil)
		if tc.url == "" {
			delete(env, "TRANSLATION_URL")
		}
		var logs bytes.Buffer
		s, err := newServer(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &logs)
		if err != nil {
			t.Fatal(err)
		}
		s.close()
		got := strings.Count(logs.String(), "hosted translation service at lindat.mff.cuni.cz")
		if (got == 1) != tc.notice || got > 1 {
			t.Errorf("TRANSLATION_URL=%q: %d notices in %s", tc.url, got, logs.String())
		}
	}
}
