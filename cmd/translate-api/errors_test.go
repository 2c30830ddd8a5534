package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/translator/translatortest"
)

// manyTextsMETS is a METS book of n pages, each with its own ALTO file.
func manyTextsMETS(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?><mets xmlns="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink"><fileSec><fileGrp USE="FULLTEXT">`)
	for i := range n {
		fmt.Fprintf(&b, `<file ID="t%d" MIMETYPE="text/xml"><FLocat LOCTYPE="URL" xlink:href="alto/%d.xml"/></file>`, i, i)
	}
	b.WriteString(`</fileGrp></fileSec><structMap TYPE="PHYSICAL"><div TYPE="physSequence">`)
	for i := range n {
		fmt.Fprintf(&b, `<div ID="P%d" TYPE="page" ORDER="%d"><fptr FILEID="t%d"/></div>`, i, i+1, i)
	}
	b.WriteString(`</div></structMap></mets>`)
	return b.Bytes()
}

// TestErrorReasons (issue 33 item 4) provokes over HTTP, through the real
// handlers of translate-api, each reason it answers, and decodes status,
// reason and detail. Reasons of the service package common to both
// services (starting, draining, rate_limited, timeout, body_timeout,
// unauthorized, origin_not_allowed) are provoked in internal/service's
// TestErrorReasonsOverHTTP; internal (a record failing its own schema, a
// job store failing) is not provoked.
func TestErrorReasons(t *testing.T) {
	english := strings.Replace(pageALTO, `CONTENT="archeologický"`, `CONTENT="The excavation of the settlement revealed the remains of houses and the graves of its inhabitants, which"`, 1)
	books := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/big/mets.xml":
			w.Write(manyTextsMETS(maxBookFiles + 1))
		case p == "/english/mets.xml":
			w.Write(manyTextsMETS(2))
		case p == "/blank/mets.xml": // a page with an image and no text
			w.Write([]byte(`<?xml version="1.0"?><mets xmlns="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink"><fileSec><fileGrp USE="DEFAULT">` +
				`<file ID="i1" MIMETYPE="image/jpeg"><FLocat LOCTYPE="URL" xlink:href="1.jpg"/></file></fileGrp></fileSec>` +
				`<structMap TYPE="PHYSICAL"><div TYPE="physSequence"><div ID="P1" TYPE="page" ORDER="1"><fptr FILEID="i1"/></div></div></structMap></mets>`))
		case strings.HasPrefix(p, "/big/alto/"), p == "/page.xml":
			w.Write([]byte(pageALTO))
		case strings.HasPrefix(p, "/english/alto/"):
			w.Write([]byte(english)) // already in the target language
		default:
			http.NotFound(w, r)
		}
	}))
	defer books.Close()
	booksHost := strings.TrimPrefix(books.URL, "http://")
	_, booksPort, _ := strings.Cut(booksHost, ":")

	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	s, ts := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir(), "BOOK_ALLOW_HOSTS": booksHost,
		"MAX_UPLOAD_MB": "1", "MEMORY_BUDGET_MB": "64", "MEMORY_WAIT_S": "0.2"}))
	// A backend that fails every call, slowly (a job's second item is
	// still queued while its first runs), and a field list that cannot be
	// read.
	failing := translatortest.New(translatortest.Config{FailAlways: 503, Delay: 2 * time.Second})
	defer failing.Close()
	_, failTS := startServer(t, testEnv(failing.URL, map[string]string{"JOBS_DIR": t.TempDir(),
		"AMCR_FIELDS_PATH": filepath.Join(t.TempDir(), "missing.txt")}))
	// A backend that cannot be opened (its model folder went away, say).
	down, err := newServer(func(k string) (string, bool) { v, ok := testEnv(mt.URL, nil)[k]; return v, ok }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	down.first.Close()
	down.first = nil
	down.openBackend = func() (backend.Backend, error) { return nil, errors.New("the backend cannot be opened") }
	downTS := servicetest.Serve(t, down.svc, down.close)

	file := func(name string, data []byte) part { return part{Field: "file", Name: name, File: true, Data: data} }
	cs := part{Field: "source_lang", Data: []byte("cs")}
	form := func(base, path string, parts ...part) func(t *testing.T) (int, []byte) {
		return func(t *testing.T) (int, []byte) { return servicetest.PostForm(t, base+path, parts...) }
	}
	raw := func(method, url, ctype, body string, header ...string) func(t *testing.T) (int, []byte) {
		return func(t *testing.T) (int, []byte) {
			req, _ := http.NewRequest(method, url, strings.NewReader(body))
			if ctype != "" {
				req.Header.Set("Content-Type", ctype)
			}
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, readBody(t, resp)
		}
	}
	dtd := `<?xml version="1.0"?>` + "\n" + `<!DOCTYPE alto [<!ENTITY x "slovo">]>` + "\n" + `<alto><Layout/></alto>`
	cp := strings.Replace(pageALTO, `encoding="UTF-8"`, `encoding="x-klingon"`, 1)
	done := submitJob(t, ts.URL, "a.alto.xml")
	pollJob(t, ts.URL, done, 30*time.Second, ended)
	var running, blank string
	const urlList = "# books to translate\nhttps://example.org/book1/mets.xml\nhttps://example.org/book2/mets.xml\n"
	var release func()

	tests := []struct {
		reason service.Reason
		status int
		detail string
		before func()
		call   func(t *testing.T) (int, []byte)
	}{
		{reason: service.ReasonBadRequest, status: 400, detail: "multipart body cannot be read", call: raw("POST", ts.URL+"/translate", "multipart/form-data", "x")},
		{reason: service.ReasonBadField, status: 422, detail: `"file"`, call: form(ts.URL, "/translate", cs)},
		{reason: service.ReasonBadField, status: 400, detail: `form field "source_lang" is longer than`, call: form(ts.URL, "/translate", file("p.alto.xml", []byte(pageALTO)), part{Field: "source_lang", Data: bytes.Repeat([]byte("c"), maxFieldBytes+1)})},
		{reason: service.ReasonBadField, status: 422, detail: "no file name", call: form(ts.URL, "/translate", file("", []byte(pageALTO)), cs)},
		{reason: service.ReasonBadField, status: 422, detail: `book_url "file:///etc/passwd"`, call: form(ts.URL, "/translate", part{Field: "book_url", Data: []byte("file:///etc/passwd")})},
		{reason: service.ReasonUnsupportedMediaType, status: 415, detail: "Content-Type text/plain", call: raw("POST", ts.URL+"/translate", "text/plain", "hello")},
		{reason: service.ReasonUnsupportedFormat, status: 422, detail: `"list.txt" is a list of books`, call: form(ts.URL, "/translate", file("list.txt", []byte(urlList)), cs)},
		{reason: service.ReasonUnsupportedFormat, status: 422, detail: `"books.xml" is a list of books`, call: form(ts.URL, "/translate", file("books.xml", []byte(urlList)), cs)},
		{reason: service.ReasonUnsupportedEncoding, status: 415, detail: `"x-klingon"`, call: form(ts.URL, "/translate", file("k.alto.xml", []byte(cp)), cs)},
		{reason: service.ReasonNotWellFormed, status: 500, detail: "not well-formed XML: line 1: document ends inside <Layout>", call: form(ts.URL, "/translate", file("broken.alto.xml", []byte("<alto><Layout>")), cs)},
		{reason: service.ReasonNotWellFormed, status: 500, detail: "empty.xml", call: form(ts.URL, "/translate", file("empty.xml", nil), cs)},
		{reason: service.ReasonNotWellFormed, status: 500, detail: "notes.xml", call: form(ts.URL, "/translate", file("notes.xml", []byte("just some words\n")), cs)},
		{reason: service.ReasonDTDRefused, status: 500, detail: "line 2: document has a DOCTYPE", call: form(ts.URL, "/translate", file("dtd.alto.xml", []byte(dtd)), cs)},
		{reason: service.ReasonSchemaTooNew, status: 422, detail: "document_json was written by a newer schema", call: form(ts.URL, "/translate", file("p.alto.xml", []byte(pageALTO)),
			part{Field: "document_json", Name: "x.document.json", File: true, Data: []byte(`{"schema_version":"9.0","doc_id":"x"}`)})},
		{reason: service.ReasonTooLarge, status: 413, detail: "MAX_UPLOAD_MB", call: form(ts.URL, "/translate", file("big.alto.xml", bytes.Repeat([]byte(" "), 2<<20)))},
		{reason: service.ReasonTooManyFiles, status: 422, detail: fmt.Sprintf("the book has %d text files", maxBookFiles+1), call: form(ts.URL, "/translate", part{Field: "book_url", Data: []byte(books.URL + "/big/mets.xml")})},
		{reason: service.ReasonTooComplex, status: 422, detail: "the document exceeds the nesting depth limit of 256", call: form(ts.URL, "/translate", file("deep.xml", nested(300)), cs)},
		{reason: service.ReasonUnsupportedFormat, status: 422, detail: "output_mode alternative refused: old.alto.xml", call: form(ts.URL, "/translate",
			file("old.alto.xml", []byte(`<alto><Layout><Page ID="p"><PrintSpace><TextBlock ID="b"><TextLine ID="l"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)),
			cs, part{Field: "output_mode", Data: []byte("alternative")})},
		{reason: service.ReasonNothingTranslated, status: 422, detail: "e.alto.xml", call: form(ts.URL, "/translate", file("e.alto.xml", []byte(english)))},
		{reason: service.ReasonNothingTranslated, status: 422, detail: "none of the book's 2 text files was translated", call: form(ts.URL, "/translate", part{Field: "book_url", Data: []byte(books.URL + "/english/mets.xml")})},
		{reason: service.ReasonUnsupportedLanguage, status: 422, detail: "language pair fi-en", call: form(ts.URL, "/translate", file("p.alto.xml", []byte(pageALTO)), part{Field: "source_lang", Data: []byte("fi")})},
		{reason: service.ReasonFieldListUnreadable, status: 422, detail: "AMCR_FIELDS_PATH", call: form(failTS.URL, "/translate", file("record.xml", manyFields(1)))},
		{reason: service.ReasonBadBook, status: 422, detail: "neither a METS file nor a IIIF manifest", call: form(ts.URL, "/translate", part{Field: "book_url", Data: []byte(books.URL + "/page.xml")})},
		{reason: service.ReasonHostNotAllowed, status: 403, detail: "book_url: host localhost:" + booksPort + " refused: it is not in BOOK_HOSTS", call: form(ts.URL, "/translate", part{Field: "book_url", Data: []byte("http://localhost:" + booksPort + "/big/mets.xml")})},
		{reason: service.ReasonFetchFailed, status: 502, detail: "404", call: form(ts.URL, "/translate", part{Field: "book_url", Data: []byte(books.URL + "/none.xml")})},
		{reason: service.ReasonNotFound, status: 404, detail: "Not Found", call: raw("GET", ts.URL+"/nowhere", "", "")},
		{reason: service.ReasonMethodNotAllowed, status: 405, detail: "Method Not Allowed", call: raw("GET", ts.URL+"/translate", "", "")},
		{reason: service.ReasonJobNotFound, status: 404, detail: `no job has the id "no-such-job"`, call: raw("GET", ts.URL+"/jobs/no-such-job", "", "")},
		// an item of a job that does not exist: the job is what is missing
		{reason: service.ReasonJobNotFound, status: 404, detail: `no job has the id "no-such-job"`, call: raw("GET", ts.URL+"/jobs/no-such-job/results/0", "", "")},
		{reason: service.ReasonItemNotFound, status: 404, detail: `has no item "7": its items are numbered 0 to`, call: raw("GET", ts.URL+"/jobs/"+done+"/results/7", "", "")},
		{reason: service.ReasonItemNotFound, status: 404, detail: `has no item "x"`, call: raw("GET", ts.URL+"/jobs/"+done+"/results/x", "", "")},
		{reason: service.ReasonJobEnded, status: 409, detail: "the job has already ended", call: raw("DELETE", ts.URL+"/jobs/"+done, "", "")},
		{reason: service.ReasonItemNotReady, status: 409, detail: "has not run yet",
			before: func() { running = submitJob(t, failTS.URL, "a.alto.xml", "b.alto.xml") },
			call: func(t *testing.T) (int, []byte) {
				return raw("GET", failTS.URL+"/jobs/"+running+"/results/1", "", "")(t)
			}},
		{reason: service.ReasonItemSkipped, status: 404, detail: "item 0 (P1) was skipped, so it has no answer: no text file for this page",
			before: func() {
				body, ct := multipartBody(t, part{Field: "book_url", Data: []byte(books.URL + "/blank/mets.xml")})
				var st jobs.Status
				if b := readBody(t, post(t, ts.URL+"/jobs", ct, body)); json.Unmarshal(b, &st) != nil {
					t.Fatalf("POST /jobs: %s", b)
				}
				blank = pollJob(t, ts.URL, st.ID, 30*time.Second, ended).ID
			},
			call: func(t *testing.T) (int, []byte) {
				return raw("GET", ts.URL+"/jobs/"+blank+"/results/0", "", "")(t)
			}},
		{reason: service.ReasonIdempotencyConflict, status: 422, detail: "Idempotency-Key", call: func(t *testing.T) (int, []byte) {
			for _, text := range []string{"hrob", "dům"} {
				body, ct := multipartBody(t, cs, file("a.alto.xml", smallALTO(text)))
				code, b := raw("POST", ts.URL+"/jobs", ct, body.String(), "Idempotency-Key", "key-1")(t)
				if text == "dům" {
					return code, b
				}
			}
			return 0, nil
		}},
		{reason: service.ReasonOverloaded, status: 503, detail: "MEMORY_BUDGET_MB",
			before: func() {
				var err error
				if release, err = s.mem.Acquire(context.Background(), s.mem.Total); err != nil {
					t.Fatal(err)
				}
			},
			call: func(t *testing.T) (int, []byte) {
				defer release()
				return form(ts.URL, "/translate", file("p.alto.xml", []byte(pageALTO)), cs)(t)
			}},
		{reason: service.ReasonBackendUnavailable, status: 503, detail: "p.alto.xml cannot be translated now: the translation backend is not available", call: form(downTS.URL, "/translate", file("p.alto.xml", []byte(pageALTO)), cs)},
		{reason: service.ReasonBackendError, status: 500, detail: "translation failed", call: form(failTS.URL, "/translate", file("p.alto.xml", []byte(pageALTO)), cs)},
	}
	for _, tt := range tests {
		t.Run(string(tt.reason), func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			code, body := tt.call(t)
			a := servicetest.CheckError(t, code, body, tt.status, string(tt.reason), tt.detail)
			t.Logf("%d %s %.200s", a.Status, a.Reason, a.Detail)
		})
	}
	// The reasons are listed in the served OpenAPI document, and those its
	// responses name are real ones.
	servicetest.CheckOpenAPIReasons(t, ts.URL, service.Reasons())
}
