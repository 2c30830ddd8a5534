package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"archivekit/internal/docrecord"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sharedData returns the path of rel under the shared data folder.
func sharedData(t testing.TB, rel string) string {
	t.Helper()
	return testenv.Data(t, rel)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testEnv is the environment of a test service talking to stand-in at url.
func testEnv(url string, extra map[string]string) map[string]string {
	env := map[string]string{
		"TRANSLATION_URL":       url,
		"TRANSLATE_PARA_CONFIG": "../../setup/translate/para_config.txt",
		"AMCR_FIELDS_PATH":      "../../setup/translate/amcr-fields.txt",
		"LOG_LEVEL":             "WARNING",
		"MTAPI_MAX_RETRIES":     "0",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// startServer builds and warms a service on env and serves it.
func startServer(t testing.TB, env map[string]string) (*server, *httptest.Server) {
	t.Helper()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s, err := newServer(lookup, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return s, servicetest.Serve(t, s.svc, s.close)
}

// The harness shared with pageclass-api's tests, under this package's
// names: part is a multipart part (a file when File is set; Name is then
// its file name, possibly empty), multipartBody a form of them.
type part = servicetest.Part

var (
	multipartBody = servicetest.Multipart
	readBody      = servicetest.ReadBody
)

func post(t testing.TB, url, ctype string, body io.Reader) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, body)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// detailKind returns "string" or "list" for an error body's detail.
func detailKind(t testing.TB, body []byte) (string, any) {
	t.Helper()
	var e struct{ Detail any }
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, body)
	}
	switch d := e.Detail.(type) {
	case string:
		return "string", d
	case []any:
		return "list", d
	}
	t.Fatalf("detail is neither a string nor a list: %s", body)
	return "", nil
}

func TestTranslateEndpoint(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	alto := readFile(t, sharedData(t, "translator/alto/MTX201501307_anon.alto.xml"))
	record := readFile(t, sharedData(t, "translator/records/C-9100725A.xml"))
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	_, noFields := startServer(t, testEnv(mt.URL, map[string]string{"AMCR_FIELDS_PATH": filepath.Join(t.TempDir(), "missing.txt")}))
	failing := translatortest.New(translatortest.Config{FailAlways: 503})
	defer failing.Close()
	_, failTS := startServer(t, testEnv(failing.URL, nil))

	small := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1" WIDTH="100" HEIGHT="100"><PrintSpace>
<TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="archeologický" HPOS="1" VPOS="1" WIDTH="10" HEIGHT="5"/><SP/><String CONTENT="výzkum" HPOS="12" VPOS="1" WIDTH="10" HEIGHT="5"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>`)

	mismatched := []byte("<?xml version=\"1.0\"?>\n<alto><Layout><Page><PrintSpace>\n<TextBlock ID=\"b1\"><TextLine><String CONTENT=\"slovo\"/></TextLine>\n</TextLine></TextBlock>\n</PrintSpace></Page></Layout></alto>\n")
	cp1252 := []byte("<?xml version=\"1.0\" encoding=\"windows-1252\"?>\n<alto><Layout><Page ID=\"p1\"><PrintSpace><TextBlock ID=\"b1\"><TextLine ID=\"l1\"><String CONTENT=\"Kirchenb\xfccher\"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>\n")
	english := bytes.Replace(small, []byte(`CONTENT="archeologický"`), []byte(`CONTENT="The excavation of the settlement revealed the remains of houses and the graves of its inhabitants, which"`), 1)
	tests := []struct {
		name    string
		server  *httptest.Server
		query   string
		ctype   string // overrides the multipart type when set
		raw     string // raw body with ctype
		parts   []part
		status  int
		detail  string // "string" or "list" for errors
		want    string // substring of the detail, or of the body on success
		dispo   string // wanted Content-Disposition file name on success
		kindXML bool
		notWant string // must not appear in the detail
	}{
		{name: "ALTO sample, form fields", parts: []part{{Field: "file", Name: "MTX201501307_anon.alto.xml", File: true, Data: alto}, {Field: "source_lang", Data: []byte("cs")}},
			status: 200, dispo: "MTX201501307_anon_en.alto.xml", kindXML: true},
		{name: "small ALTO, scalars as query parameters", query: "?source_lang=cs&target_lang=en&output_mode=append&is_alto=true",
			parts: []part{{Field: "file", Name: "page-1.alto.xml", File: true, Data: small}}, status: 200, dispo: "page-1_en.alto.xml",
			want: `CONTENT="archaeological"`, kindXML: true},
		{name: "form field wins over query", query: "?output_mode=bogus",
			parts:  []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}, {Field: "output_mode", Data: []byte("replace")}, {Field: "source_lang", Data: []byte("cs")}},
			status: 200, dispo: "p_en.alto.xml", kindXML: true},
		{name: "metadata record, auto-detected kind", parts: []part{{Field: "file", Name: "C-9100725A.xml", File: true, Data: record}},
			status: 200, dispo: "C-9100725A_en.xml", kindXML: true},
		{name: "client path never becomes a path", parts: []part{{Field: "file", Name: `..\..\etc/evil.alto.xml`, File: true, Data: small}, {Field: "source_lang", Data: []byte("cs")}},
			status: 200, dispo: "evil_en.alto.xml", kindXML: true},
		{name: "missing file", parts: []part{{Field: "source_lang", Data: []byte("cs")}}, status: 422, detail: "list", want: "file"},
		{name: "missing file name", parts: []part{{Field: "file", File: true, Data: small}}, status: 422, detail: "string", want: "no file name"},
		{name: "a document named .txt", parts: []part{{Field: "file", Name: "page.txt", File: true, Data: small}, {Field: "source_lang", Data: []byte("cs")}},
			status: 200, dispo: "page_en.txt", kindXML: true},
		{name: "a list of books", parts: []part{{Field: "file", Name: "urls.txt", File: true, Data: []byte("https://example.org/b/mets.xml\n")}}, status: 422, detail: "string", want: `"urls.txt" is a list of books`},
		{name: "JSON body without a file part", ctype: "application/json", raw: `{"source_lang":"cs"}`, status: 422, detail: "list", want: "file"},
		{name: "text/plain", ctype: "text/plain", raw: "hello", status: 415, detail: "string", want: "text/plain"},
		{name: "no content type", ctype: "-", raw: "hello", status: 415, detail: "string", want: "not supported"},
		{name: "is_alto not boolean", query: "?is_alto=perhaps", parts: []part{{Field: "file", Name: "a.xml", File: true, Data: small}}, status: 422, detail: "list", want: "is_alto"},
		{name: "output_mode not allowed", parts: []part{{Field: "file", Name: "a.xml", File: true, Data: small}, {Field: "output_mode", Data: []byte("merge")}}, status: 422, detail: "list", want: "output_mode"},
		{name: "unsupported explicit pair", parts: []part{{Field: "file", Name: "a.xml", File: true, Data: small}, {Field: "source_lang", Data: []byte("fi")}}, status: 422, detail: "string", want: "fi-en"},
		{name: "metadata with unreadable AMCR_FIELDS_PATH", server: noFields, parts: []part{{Field: "file", Name: "C-9100725A.xml", File: true, Data: record}}, status: 422, detail: "string", want: "AMCR_FIELDS_PATH"},
		{name: "ALTO with unreadable AMCR_FIELDS_PATH still works", server: noFields, parts: []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}, {Field: "source_lang", Data: []byte("cs")}}, status: 200, dispo: "p_en.alto.xml", kindXML: true},
		{name: "is_alto=false forces metadata", server: noFields, query: "?is_alto=false", parts: []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}}, status: 422, detail: "string", want: "handled as metadata"},
		{name: "malformed XML", parts: []part{{Field: "file", Name: "broken.alto.xml", File: true, Data: []byte("<alto><Layout>")}, {Field: "source_lang", Data: []byte("cs")}}, status: 500, detail: "string", want: "translation failed"},
		{name: "a PNG image", parts: []part{{Field: "file", Name: "scan.png", File: true, Data: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR&#&x")}, {Field: "source_lang", Data: []byte("cs")}}, status: 422, detail: "string", want: "scan.png is image/png by its content, a page image or PDF, not an XML document"},
		{name: "plain text named .xml", parts: []part{{Field: "file", Name: "notes.xml", File: true, Data: []byte("just some words, no markup\n")}, {Field: "source_lang", Data: []byte("cs")}}, status: 500, detail: "string", want: "not well-formed XML"},
		{name: "a target language no pair goes into", parts: []part{{Field: "file", Name: "doc.alto.xml", File: true, Data: readFile(t, "../../internal/translate/alto/testdata/real/gdz-kleiuniv/00000005.xml")}, {Field: "target_lang", Data: []byte("xx")}},
			status: 422, detail: "string", want: "target_lang: target language xx: the backend does not translate into it; it translates into "},
		{name: "a METS file uploaded", parts: []part{{Field: "file", Name: "mets.xml", File: true, Data: []byte(bookMETS)}, {Field: "source_lang", Data: []byte("cs")}}, status: 422, detail: "string", want: "it looks like a book (a METS file or IIIF manifest): send its URL as book_url"},
		{name: "empty file", parts: []part{{Field: "file", Name: "empty.xml", File: true, Data: []byte{}}, {Field: "source_lang", Data: []byte("cs")}}, status: 500, detail: "string", want: "the document is empty"},
		{name: "two root elements", parts: []part{{Field: "file", Name: "two.xml", File: true, Data: []byte("<a>jedna</a><b>dva</b>")}, {Field: "source_lang", Data: []byte("cs")}}, status: 500, detail: "string", want: "a second root element <b>"},
		{name: "target_lang with a path", parts: []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}, {Field: "target_lang", Data: []byte("en/../../x")}}, status: 422, detail: "list", want: "target_lang"},
		{name: "source_lang not a code", query: "?source_lang=czech", parts: []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}}, status: 422, detail: "list", want: "source_lang"},
		{name: "two target_lang fields", parts: []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}, {Field: "target_lang", Data: []byte("en")}, {Field: "target_lang", Data: []byte("de")}},
			status: 422, detail: "list", want: "loc:[body target_lang] msg:Field given 2 times: send it exactly once type:duplicate_field"},
		{name: "two response_format query parameters", query: "?response_format=json&response_format=xml", parts: []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}},
			status: 422, detail: "list", want: "loc:[query response_format]"},
		{name: "two file parts", parts: []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}, {Field: "file", Name: "q.alto.xml", File: true, Data: small}}, status: 422, detail: "list", want: "duplicate_field"},
		{name: "backend fails after retries", server: failTS, parts: []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}, {Field: "source_lang", Data: []byte("cs")}}, status: 500, detail: "string", want: "translation failed", notWant: "127.0.0.1"},
		{name: "windows-1252 ALTO answered in windows-1252", parts: []part{{Field: "file", Name: "w.alto.xml", File: true, Data: cp1252}, {Field: "source_lang", Data: []byte("de")}},
			status: 200, dispo: "w_en.alto.xml", want: "CONTENT=\"KIRCHENB\xdcCHER\"", kindXML: true},
		{name: "unknown encoding", parts: []part{{Field: "file", Name: "k.alto.xml", File: true, Data: bytes.Replace(small, []byte(`encoding="UTF-8"`), []byte(`encoding="x-klingon"`), 1)}, {Field: "source_lang", Data: []byte("cs")}}, status: 415, detail: "string", want: `"x-klingon"`},
		{name: "mismatched end tag", parts: []part{{Field: "file", Name: "m.alto.xml", File: true, Data: mismatched}, {Field: "source_lang", Data: []byte("cs")}}, status: 500, detail: "string", want: "line 4: end tag </TextLine> does not match start tag <TextBlock> of line 3"},
		{name: "blank line before the declaration", parts: []part{{Field: "file", Name: "t.xml", File: true, Data: append([]byte("\n"), record...)}}, status: 500, detail: "string", want: "line 2: XML declaration not at the very start"},
		{name: "page already in the target language", parts: []part{{Field: "file", Name: "e.alto.xml", File: true, Data: english}}, status: 422, detail: "string", want: "nothing translated"},
		{name: "METS file: nothing to translate", parts: []part{{Field: "file", Name: "mets.xml", File: true, Data: []byte(`<?xml version="1.0"?>` + "\n" + `<mets:mets xmlns:mets="http://www.loc.gov/METS/"><mets:dmdSec ID="d1"/></mets:mets>`)}}, status: 422, detail: "string", want: "none of the field list's XPath targets matched"},
		{name: "document_json not JSON", parts: []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}, {Field: "document_json", Name: "x.document.json", File: true, Data: []byte("{nope")}}, status: 422, detail: "string", want: "document_json cannot be parsed"},
		{name: "document_json newer schema", parts: []part{{Field: "file", Name: "p.alto.xml", File: true, Data: small}, {Field: "document_json", Name: "x.document.json", File: true, Data: []byte(`{"schema_version":"9.0","doc_id":"x"}`)}}, status: 422, detail: "string", want: "newer schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.server
			if srv == nil {
				srv = ts
			}
			var body io.Reader
			ctype := tc.ctype
			if tc.raw != "" {
				body = strings.NewReader(tc.raw)
			} else {
				b, ct := multipartBody(t, tc.parts...)
				body, ctype = b, ct
			}
			if ctype == "-" {
				ctype = ""
			}
			resp := post(t, srv.URL+"/translate"+tc.query, ctype, body)
			b := readBody(t, resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tc.status, b)
			}
			if tc.detail != "" {
				kind, d := detailKind(t, b)
				if kind != tc.detail {
					t.Fatalf("detail is a %s, want a %s: %s", kind, tc.detail, b)
				}
				if s := fmt.Sprint(d); !strings.Contains(s, tc.want) {
					t.Fatalf("detail %q does not mention %q", s, tc.want)
				}
				if s := fmt.Sprint(d); tc.notWant != "" && strings.Contains(s, tc.notWant) {
					t.Fatalf("detail %q exposes %q", s, tc.notWant)
				}
				return
			}
			if got := resp.Header.Get("Content-Type"); got != "application/xml" {
				t.Fatalf("Content-Type %q", got)
			}
			if got, want := resp.Header.Get("Content-Disposition"), `attachment; filename="`+tc.dispo+`"`; got != want {
				t.Fatalf("Content-Disposition %q, want %q", got, want)
			}
			if tc.want != "" && !bytes.Contains(b, []byte(tc.want)) {
				t.Fatalf("body lacks %q: %.400s", tc.want, b)
			}
			if n := resp.Header.Get("X-Translation-Translated"); n == "" || n == "0" || resp.Header.Get("X-Translation-Units") == "" {
				t.Fatalf("count headers: translated %q, units %q", n, resp.Header.Get("X-Translation-Units"))
			}
			if tc.kindXML && !bytes.HasPrefix(bytes.TrimPrefix(b, []byte("\uFEFF")), []byte("<?xml")) {
				t.Fatalf("body is not the XML document: %.200s", b)
			}
		})
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) > 0 {
		t.Errorf("%d files left in the temporary folder, first %s", len(left), left[0].Name())
	}
}

// TestPageWithoutText: a blank page comes back as it was, with 200 and no
// unit counted (a book's blank pages are not failures).
func TestPageWithoutText(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	blank := []byte("<?xml version=\"1.0\"?>\r\n<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\"><Layout><Page ID=\"p2\"><PrintSpace/></Page></Layout></alto>\r\n")
	body, ct := multipartBody(t, part{Field: "file", Name: "0002.alto.xml", File: true, Data: blank}, part{Field: "source_lang", Data: []byte("cs")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	if resp.StatusCode != 200 || !bytes.Equal(b, blank) {
		t.Fatalf("status %d, body %q, want 200 and the page as it was", resp.StatusCode, b)
	}
	if u, n := resp.Header.Get("X-Translation-Units"), resp.Header.Get("X-Translation-Translated"); u != "0" || n != "0" {
		t.Errorf("units %q, translated %q, want 0 and 0", u, n)
	}
}

// A doc_id with separators is data: the record comes back under an escaped
// file name that no client can take for a path.
func TestRecordNameOfHostileDocID(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	small := []byte(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)
	for id, want := range map[string]string{"../../etc/x": "..%2F..%2Fetc%2Fx.document.json", `a\b`: "a%5Cb.document.json"} {
		rec, err := docrecord.New(id)
		if err != nil {
			t.Fatal(err)
		}
		base, _ := rec.Bytes()
		body, ct := multipartBody(t, part{Field: "file", Name: "p.alto.xml", File: true, Data: small},
			part{Field: "document_json", Name: "r.json", File: true, Data: base}, part{Field: "source_lang", Data: []byte("cs")})
		resp := post(t, ts.URL+"/translate", ct, body)
		b := readBody(t, resp)
		if resp.StatusCode != 200 {
			t.Fatalf("doc_id %q: status %d: %s", id, resp.StatusCode, b)
		}
		_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		mr := multipart.NewReader(bytes.NewReader(b), params["boundary"])
		var names []string
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			_, dp, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition")) // raw, not p.FileName's Base
			names = append(names, dp["filename"])
		}
		if len(names) != 2 || names[1] != want {
			t.Errorf("doc_id %q: part file names %q, want the record as %q", id, names, want)
		}
	}
}

// TestTranslateWithRecord: a document and its record go in, the translated
// document and the accreted record come back; nothing of the request is
// written to disk (the temporary folder is gone once the service started,
// which checks it can write there).
func TestTranslateWithRecord(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"DOCKER_IMAGE": "registry.example/translate-api:sha-1234567", "RUNNER_REF": ""}))
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	rec, err := docrecord.New("MTX201501307")
	if err != nil {
		t.Fatal(err)
	}
	base, err := rec.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	small := []byte(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)
	body, ct := multipartBody(t,
		part{Field: "file", Name: "MTX201501307-1.alto.xml", File: true, Data: small},
		part{Field: "document_json", Name: "MTX201501307.document.json", File: true, Data: base},
		part{Field: "source_lang", Data: []byte("cs")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	mt2, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt2 != "multipart/mixed" {
		t.Fatalf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(params["boundary"]) {
		t.Fatalf("boundary %q is not a uuid4", params["boundary"])
	}
	var names, types []string
	var parts [][]byte
	for _, p := range mixedParts(t, params["boundary"], b) {
		names = append(names, path.Base(p.name))
		types = append(types, p.ctype)
		parts = append(parts, p.data)
	}
	if want := []string{"MTX201501307-1_en.alto.xml", "MTX201501307.document.json"}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("part file names %v, want %v", names, want)
	}
	if fmt.Sprint(types) != "[application/xml application/json]" {
		t.Fatalf("part types %v", types)
	}
	if !bytes.Contains(parts[0], []byte(`CONTENT="grave"`)) {
		t.Fatalf("XML part not translated: %s", parts[0])
	}
	out, err := docrecord.Parse(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	if out.DocID() != "MTX201501307" {
		t.Fatalf("doc_id %q", out.DocID())
	}
	for path, want := range map[string]string{"source_lang": "cs", "target_lang": "en", "backend": "mtapi", "output_mode": "replace"} {
		if v, _ := out.Get("translations", path); v != want {
			t.Errorf("translations.%s = %v, want %s", path, v, want)
		}
	}
	if v, _ := out.Get("derived_from", "translated_xml"); v != "MTX201501307-1_en.alto.xml" {
		t.Errorf("derived_from.translated_xml = %v", v)
	}
	// The request's provenance entry carries the run's licence.
	if v, _ := out.Get("provenance", "license"); v != "CC BY-NC-SA 4.0" {
		t.Errorf("provenance.license = %v", v)
	}
	if list, _ := out.Get("provenance", "contributors"); len(list.([]any)) != 1 {
		t.Errorf("provenance.contributors = %v", list)
	} else if o := list.([]any)[0].(*docrecord.Object); fmt.Sprint(o.Keys()) != "[program version run_id at blocks license license_url container_image]" {
		t.Errorf("contributor keys %v", o.Keys())
	}
	// The boundary is random: a second answer has another one.
	body, ct = multipartBody(t,
		part{Field: "file", Name: "MTX201501307-1.alto.xml", File: true, Data: small},
		part{Field: "document_json", Name: "b.json", File: true, Data: base},
		part{Field: "source_lang", Data: []byte("cs")})
	resp2 := post(t, ts.URL+"/translate", ct, body)
	readBody(t, resp2)
	_, params2, _ := mime.ParseMediaType(resp2.Header.Get("Content-Type"))
	if params2["boundary"] == params["boundary"] {
		t.Fatal("two answers share a boundary")
	}
}

func TestInfoAndRoot(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	_, capped := startServer(t, testEnv(mt.URL, map[string]string{"MAX_UPLOAD_MB": "7"}))
	for _, tc := range []struct {
		name, url, golden string
	}{
		{"info", ts.URL + "/info", "info.golden.json"},
		{"openapi", ts.URL + "/openapi.json", "openapi.golden.json"},
		{"root", ts.URL + "/", "root.golden.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			b := readBody(t, resp)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if tc.name == "info" {
				// As a client generated from the document reads it (its
				// five formats broke the schema's two).
				servicetest.MatchesSchema(t, openapiJSON, "TranslateInfo", b)
			}
			golden(t, tc.golden, b)
		})
	}
	resp, err := http.Get(capped.URL + "/info")
	if err != nil {
		t.Fatal(err)
	}
	var in info
	if err := json.Unmarshal(readBody(t, resp), &in); err != nil {
		t.Fatal(err)
	}
	if in.Limits.MaxUploadMB != 7 || len(in.SupportedFormats) != 5 { // page, hocr and book since issues 28 and 29
		t.Fatalf("info with MAX_UPLOAD_MB=7: %+v", in)
	}
}

// golden compares JSON got with testdata/name.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	servicetest.GoldenJSON(t, name, got, *update)
}

func TestDeepHealth(t *testing.T) {
	warm := translatortest.New(translatortest.Config{})
	defer warm.Close()
	cold := translatortest.New(translatortest.Config{NoModels: true})
	defer cold.Close()
	tests := []struct {
		name     string
		url      string
		langFail string
		status   int
		want     string
	}{
		{"warm backend, identifier loaded", warm.URL, "", 200, "all checks passed"},
		{"cold backend", cold.URL, "", 503, "is cold"},
		{"identifier failed", warm.URL, "models not embedded", 503, "language identification failed to load"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(tc.url, nil)
			lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			s, err := newServer(lookup, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if tc.langFail != "" {
				s.langDegraded = func() (bool, string) { return true, tc.langFail }
			}
			ts := servicetest.Serve(t, s.svc, s.close)
			resp, err := http.Get(ts.URL + "/health?deep=true")
			if err != nil {
				t.Fatal(err)
			}
			b := readBody(t, resp)
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("status %d body %s; want %d mentioning %q", resp.StatusCode, b, tc.status, tc.want)
			}
			// The check is open without a token: it names no backend
			// address (a backend cold at start was named).
			if strings.Contains(string(b), strings.TrimPrefix(tc.url, "http://")) {
				t.Errorf("deep health names the backend's address: %s", b)
			}
			// Plain /health and /ready stay 200 whatever the deep check says.
			for _, p := range []string{"/health", "/ready"} {
				r, err := http.Get(ts.URL + p)
				if err != nil {
					t.Fatal(err)
				}
				readBody(t, r)
				if r.StatusCode != 200 {
					t.Fatalf("%s answered %d", p, r.StatusCode)
				}
			}
		})
	}
}

func TestConfiguration(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OUTPUT_MODE": "merge"}, "OUTPUT_MODE"},
		{map[string]string{"TRANSLATION_BACKEND": "deepl"}, "TRANSLATION_BACKEND"},
		{map[string]string{"TRANSLATION_BACKEND": "ct2"}, "CT2_MODEL_DIR"},
		{map[string]string{"TRANSLATION_BACKEND": "chat_compatible"}, "LLM_BASE_URL"},
		{map[string]string{"TRANSLATION_BACKEND": "chat_compatible", "LLM_BASE_URL": "http://127.0.0.1:1/v1"}, "LLM_MODEL"},
		{map[string]string{"PORT": ""}, "PORT"},
		// Set but empty (as from $(cat a-missing-file)): the text went to
		// the public hosted service as if it were unset.
		{map[string]string{"TRANSLATION_URL": ""}, "TRANSLATION_URL is set but empty"},
		// A setting at fault, not a warm-up failure (it exited 1).
		{map[string]string{"VOCABULARY_PATH": "/nonexistent/vocabulary.csv"}, `VOCABULARY_PATH="/nonexistent/vocabulary.csv"`},
	}
	for _, tc := range tests {
		env := testEnv("http://127.0.0.1:1", tc.env)
		_, err := newServer(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %s", tc.env, err, tc.want)
		}
	}
	// OUTPUT_MODE=append is the default of /translate.
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"OUTPUT_MODE": "append"}))
	small := []byte(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)
	body, ct := multipartBody(t, part{Field: "file", Name: "p.alto.xml", File: true, Data: small}, part{Field: "source_lang", Data: []byte("cs")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`CONTENT="hrob"`)) || !bytes.Contains(b, []byte(`CONTENT="grave"`)) {
		t.Fatalf("append by OUTPUT_MODE: status %d, body %s", resp.StatusCode, b)
	}
}

// TestMetricsCountUnits: /metrics counts the units translated (as the
// X-Translation-Translated headers say) and the backend errors.
func TestMetricsCountUnits(t *testing.T) {
	small := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1" WIDTH="100" HEIGHT="100"><PrintSpace>
<TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="archeologický" HPOS="1" VPOS="1" WIDTH="10" HEIGHT="5"/><SP/><String CONTENT="výzkum" HPOS="12" VPOS="1" WIDTH="10" HEIGHT="5"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>`)
	metrics := func(s *server) string {
		var b bytes.Buffer
		_ = s.svc.Metrics.Write(&b)
		return b.String()
	}
	send := func(url string) *http.Response {
		body, ct := multipartBody(t, part{Field: "file", Name: "p.alto.xml", File: true, Data: small}, part{Field: "source_lang", Data: []byte("cs")})
		resp := post(t, url+"/translate", ct, body)
		readBody(t, resp)
		return resp
	}
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	s, ts := startServer(t, testEnv(mt.URL, nil))
	if m := metrics(s); !strings.Contains(m, metricUnits+" 0\n") || !strings.Contains(m, metricBackendErrors+" 0\n") {
		t.Fatalf("counters not at 0 before any request:\n%s", m)
	}
	n := 0
	for i := 0; i < 2; i++ {
		resp := send(ts.URL)
		k, err := strconv.Atoi(resp.Header.Get("X-Translation-Translated"))
		if resp.StatusCode != 200 || err != nil || k == 0 {
			t.Fatalf("status %d, translated %q", resp.StatusCode, resp.Header.Get("X-Translation-Translated"))
		}
		n += k
	}
	if m := metrics(s); !strings.Contains(m, fmt.Sprintf("%s %d\n", metricUnits, n)) {
		t.Errorf("metrics lack %s %d:\n%s", metricUnits, n, m)
	}
	failing := translatortest.New(translatortest.Config{FailAlways: 503})
	defer failing.Close()
	fs, fts := startServer(t, testEnv(failing.URL, nil))
	if resp := send(fts.URL); resp.StatusCode != 500 {
		t.Fatalf("failing backend: status %d", resp.StatusCode)
	}
	if m := metrics(fs); strings.Contains(m, metricBackendErrors+" 0\n") || !strings.Contains(m, metricUnits+" 0\n") {
		t.Errorf("a backend failure is not counted:\n%s", m)
	}
}

// readPart is a part of a multipart/mixed answer as read by a client.
type readPart struct {
	name, ctype string // the Content-Disposition file name, whole
	data        []byte
}

// mixedParts reads the parts of a multipart/mixed answer body.
func mixedParts(t testing.TB, boundary string, body []byte) []readPart {
	t.Helper()
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var out []readPart
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		_, dp, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
		data, _ := io.ReadAll(p)
		out = append(out, readPart{name: dp["filename"], ctype: p.Header.Get("Content-Type"), data: data})
	}
}

// A translated hOCR document is answered as text/html (it may be HTML5,
// not XML), as a book job's hOCR item is typed; other documents as
// application/xml. Before, every answer said application/xml.
func TestAnswerType(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	for _, c := range []struct{ file, want string }{
		{"../../internal/translate/hocr/testdata/real/ocropy_german_hocrtools-litver.hocr", "text/html"},
		{"../../internal/translate/pagexml/testdata/real/ocrd-gt_german_kant1784-0017.page.xml", "application/xml"},
	} {
		body, ctype := multipartBody(t, part{Field: "file", Name: filepath.Base(c.file), File: true, Data: readFile(t, c.file)}, part{Field: "source_lang", Data: []byte("de")})
		resp := post(t, ts.URL+"/translate", ctype, body)
		readBody(t, resp)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.want {
			t.Errorf("%s: %d, Content-Type %q, want %s", filepath.Base(c.file), resp.StatusCode, resp.Header.Get("Content-Type"), c.want)
		}
	}
}

// TestDeepHealthBackendGone: a backend warm at start that stops answering
// makes the deep health check 503 naming it (it said ok while every
// request failed); /ready stays 200; the change is logged once and
// translate_backend_up says 0 (the loss was in neither).
func TestDeepHealthBackendGone(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	env := testEnv(mt.URL, nil)
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var logs servicetest.LogBuffer
	s, err := newServer(lookup, &logs)
	if err != nil {
		t.Fatal(err)
	}
	ts := servicetest.Serve(t, s.svc, s.close)
	get := func(p string) (int, string) {
		r, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		return r.StatusCode, string(readBody(t, r))
	}
	if code, body := get("/health?deep=true"); code != 200 {
		t.Fatalf("backend up: %d %s", code, body)
	}
	mt.Close()
	s.probeMu.Lock()
	s.probeAt = time.Time{} // the last probe is not reused
	s.probeMu.Unlock()
	code, body := get("/health?deep=true")
	if code != 503 || !strings.Contains(body, "does not answer") || !strings.Contains(body, `"status":"degraded"`) {
		t.Errorf("backend gone: %d %s; want 503 degraded, does not answer", code, body)
	}
	if code, _ := get("/ready"); code != 200 {
		t.Errorf("/ready %d, want 200", code)
	}
	if n := strings.Count(logs.String(), "translation backend stopped answering"); n != 1 {
		t.Errorf("the backend's loss logged %d times, want once:\n%s", n, logs.String())
	}
	if _, m := get("/metrics"); !strings.Contains(m, "translate_backend_up 0\n") {
		t.Errorf("metrics do not say the backend is down:\n%s", m)
	}
}

// A document_json that fails the record schema is refused with 422 before
// anything is translated: the record answered must pass the schema.
func TestTranslateRefusesInvalidRecord(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	small := []byte(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)
	body, ct := multipartBody(t,
		part{Field: "file", Name: "MTX201501307-1.alto.xml", File: true, Data: small},
		part{Field: "document_json", Name: "MTX201501307.document.json", File: true, Data: []byte(`{"schema_version":"1.0","doc_id":"X","derived_from":{"scan":5}}`)},
		part{Field: "source_lang", Data: []byte("cs")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	if resp.StatusCode != 422 || !strings.Contains(string(b), "fails the record schema") || mt.Posts.Load() != 0 {
		t.Errorf("status %d, %d backend calls: %s", resp.StatusCode, mt.Posts.Load(), b)
	}
}

// TestAttachment: the Content-Disposition names a file as ASCII, plus an
// RFC 8187 filename* in UTF-8; a name that is not UTF-8 (a cp852 name
// from a Windows zip) gets the ASCII name only, "_" for each stray byte:
// its filename* was the \xNN text percent-encoded (%5Cx8e), which a
// browser saves with backslashes.
func TestAttachment(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"doc_en.alto.xml", `attachment; filename="doc_en.alto.xml"`},
		{`a"b\c_en.xml`, `attachment; filename="a_b_c_en.xml"`},
		{"zápis_en.xml", `attachment; filename="z_pis_en.xml"; filename*=UTF-8''z%C3%A1pis_en.xml`},
		{"z\xe1pis_en.xml", `attachment; filename="z_pis_en.xml"`},
		{"\x8e\xe1dost_en.alto.xml", `attachment; filename="__dost_en.alto.xml"`},
		{"žá\x8edost_en.xml", `attachment; filename="___dost_en.xml"`},
		// A right-to-left override (or another bidirectional control) is
		// not offered: "ü\u202eLMX_en.alto.xml" displayed backwards from it.
		{"ü\u202eLMX_en.alto.xml", `attachment; filename="__LMX_en.alto.xml"; filename*=UTF-8''%C3%BCLMX_en.alto.xml`},
		{"a\u2067b\u2069\u200f_en.xml", `attachment; filename="a_b___en.xml"; filename*=UTF-8''ab_en.xml`},
	} {
		if got := attachment(tc.name); got != tc.want {
			t.Errorf("attachment(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestDeepHealthBackendRefuses: a backend that answers its model list 401
// (it wants credentials) makes the deep check say it refuses this service,
// with what to check (it said the backend "does not answer").
func TestDeepHealthBackendRefuses(t *testing.T) {
	var refuse atomic.Bool
	mt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"_embedded":{"item":[{"model":"cs-en","supports":{"cs":["en"]}}]}}`)
	}))
	defer mt.Close()
	s, ts := startServer(t, testEnv(mt.URL, nil))
	refuse.Store(true)
	s.probeMu.Lock()
	s.probeAt = time.Time{} // the last probe is not reused
	s.probeMu.Unlock()
	resp, err := http.Get(ts.URL + "/health?deep=true")
	if err != nil {
		t.Fatal(err)
	}
	body := string(readBody(t, resp))
	if resp.StatusCode != 503 || !strings.Contains(body, "translation backend mtapi refuses this service") || !strings.Contains(body, "does the service need credentials?") {
		t.Errorf("backend refusing: %d %s", resp.StatusCode, body)
	}
}
