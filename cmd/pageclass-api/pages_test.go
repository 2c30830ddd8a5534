package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"archivekit/bindings/pdfium"
	"archivekit/internal/docrecord"
)

func TestParsePages(t *testing.T) {
	for _, tc := range []struct {
		in      string
		n       int
		want    []int // 0-based indexes
		wantErr string
	}{
		{"1,3,5-7", 8, []int{0, 2, 4, 5, 6}, ""},
		{" 2 , 1 ", 3, []int{0, 1}, ""},
		{"2-3,3", 3, []int{1, 2}, ""},
		{"4", 4, []int{3}, ""},
		{"5", 4, nil, "pages 5: the document has 4 pages"},
		{"2-9", 4, nil, "pages 2-9: the document has 4 pages"},
		{"", 4, nil, "an empty item"},
		{"1,,2", 4, nil, "an empty item"},
		{"0", 4, nil, `"0" is not a page number`},
		{"a-b", 4, nil, `"a-b" is not a page number`},
		{"-3", 4, nil, `"-3" is not a page number`},
		{"+3", 4, nil, `"+3" is not a page number`},
		{"3-", 4, nil, `"3-" is not a page number`},
		{"1-2-3", 4, nil, `"1-2-3" is not a page number`},
		{"7-5", 8, nil, `the range "7-5" runs backwards`},
	} {
		rs, err := parsePages(tc.in)
		var got []int
		if err == nil {
			got, err = selectPages(rs, tc.n)
		}
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := parsePages(strings.Repeat("1,", maxPageRanges) + "1"); err == nil {
		t.Error("more than maxPageRanges items accepted")
	}
}

// labelledPDF is makePDF(n) whose catalog carries the page labels tree.
func labelledPDF(n int, tree string) []byte {
	return bytes.Replace(makePDF(n), []byte("<< /Type /Catalog /Pages 2 0 R >>"), []byte("<< /Type /Catalog /Pages 2 0 R /PageLabels "+tree+" >>"), 1)
}

// TestPredictDocumentPages: the pages field selects pages (numbers kept),
// each page carries its PDF label in the answer and in the record, a
// malformed or out-of-range selection is a 422 naming it, MAX_PDF_PAGES
// counts the pages selected, and /info shows both settings.
func TestPredictDocumentPages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the service")
	}
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "MAX_PDF_PAGES": "3", "PDF_RENDER_DPI": "72"}, nil)
	pdf := labelledPDF(6, "<< /Nums [0 << /S /r >> 2 << /S /D /St 12 >> 5 << /P (12a) >>] >>")
	file := upload{Field: "file", Name: "book.pdf", CType: "application/pdf", Data: pdf}
	field := func(k, v string) upload { return upload{Field: k, Data: []byte(v)} }

	body0, ct := multipartForm(t, file, field("pages", "2, 5-6"), field("document_json_out", "true"))
	resp0, err := http.Post(ts.URL+"/predict_document", ct, body0)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp0.Body)
	resp0.Body.Close()
	if status := resp0.StatusCode; status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	// The limits applied to the request are in a header.
	if l := resp0.Header.Get("X-Limits-Applied"); !strings.Contains(l, "max_pdf_pages=3") || !strings.Contains(l, "pdf_render_dpi=72") || !strings.Contains(l, "request_timeout_s=") {
		t.Errorf("X-Limits-Applied %q", l)
	}
	var doc struct {
		PageCount int `json:"page_count"`
		Pages     []struct {
			Page  int    `json:"page"`
			Label string `json:"label"`
		} `json:"pages"`
		Record json.RawMessage `json:"document_json"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	type pl struct {
		Page  int
		Label string
	}
	var got []pl
	for _, p := range doc.Pages {
		got = append(got, pl{p.Page, p.Label})
	}
	if want := []pl{{2, "ii"}, {5, "14"}, {6, "12a"}}; doc.PageCount != 6 || !reflect.DeepEqual(got, want) {
		t.Errorf("page_count %d, pages %v; want 6 and %v", doc.PageCount, got, want)
	}
	rec, err := docrecord.Parse(doc.Record)
	if err != nil {
		t.Fatal(err)
	}
	// The uploaded PDF is the record's source, by its SHA-256 (the
	// durable key with doc_id), as the command line names the file.
	sum := sha256.Sum256(pdf)
	sha, _ := rec.Get("source", "sha256")
	mt, _ := rec.Get("source", "media_type")
	if sha != hex.EncodeToString(sum[:]) || mt != "application/pdf" {
		t.Errorf("record source sha256 %v, media_type %v; want the PDF's", sha, mt)
	}
	cats, _ := rec.Get("page_categories")
	o, _ := cats.(*docrecord.Object)
	for _, l := range []string{"ii", "14", "12a"} {
		if v, ok := o.Get(l); !ok || v == "" {
			t.Errorf("record page_categories has no page %q: %s", l, doc.Record)
		}
	}

	for _, tc := range []struct {
		pages  string
		status int
		want   string
	}{
		{"1-4", 413, "4 pages selected: at most 3"},
		{"", 413, "has 6 pages: at most 3 pages are classified per request (MAX_PDF_PAGES); select some with the pages field"},
		{"7", 422, "pages 7: the document has 6 pages"},
		{"3-1", 422, `pages \"3-1\": the range \"3-1\" runs backwards`},
		{"x", 422, `pages \"x\": \"x\" is not a page number`},
	} {
		parts := []upload{file}
		if tc.pages != "" {
			parts = append(parts, field("pages", tc.pages))
		}
		status, body := postForm(t, ts.URL+"/predict_document", parts...)
		if status != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("pages %q: %d %s; want %d with %q", tc.pages, status, body, tc.status, tc.want)
		}
	}
	_, png := samplePage(t)
	status, body := postForm(t, ts.URL+"/predict_image", upload{Field: "file", Name: "p.png", CType: "image/png", Data: png}, field("pages", "1"))
	if status != 422 || !strings.Contains(string(body), "send it to /predict_document") {
		t.Errorf("pages on /predict_image: %d %s", status, body)
	}
	resp, err := http.Get(ts.URL + "/info")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(info), `"max_pdf_pages":3,"pdf_render_dpi":72,"pdf_renderer":"poppler"`) {
		t.Errorf("/info limits: %s", info)
	}
}

// TestPDFSettingsRefused: a bad MAX_PDF_PAGES or PDF_RENDER_DPI stops the
// service at configuration, naming the variable.
func TestPDFSettingsRefused(t *testing.T) {
	for env, want := range map[string]string{"MAX_PDF_PAGES": `MAX_PDF_PAGES="0"`, "PDF_RENDER_DPI": `PDF_RENDER_DPI="0"`, "PDF_RENDERER": `PDF_RENDERER="0": use poppler`} {
		_, err := newServer(testOptions(t), func(k string) (string, bool) {
			if k == env {
				return "0", true
			}
			return "", false
		}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=0: %v", env, err)
		}
	}
}

// TestDecodeSettings: DECODE_IN_PROCESS=1 decodes uploads inside the
// service and /info says so (no time limit); bad values of it or of
// DECODE_TIMEOUT_S or DECODE_MEMORY_MB stop the service at configuration,
// naming the variable.
func TestDecodeSettings(t *testing.T) {
	bad := map[string]string{"DECODE_IN_PROCESS": "2", "DECODE_TIMEOUT_S": "0", "DECODE_MEMORY_MB": "256"}
	for env, want := range map[string]string{"DECODE_IN_PROCESS": `DECODE_IN_PROCESS="2"`, "DECODE_TIMEOUT_S": `DECODE_TIMEOUT_S="0"`, "DECODE_MEMORY_MB": `DECODE_MEMORY_MB="256"`} {
		_, err := newServer(testOptions(t), func(k string) (string, bool) {
			v, ok := bad[k]
			return v, ok && k == env
		}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", env, err, want)
		}
	}
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "DECODE_IN_PROCESS": "1"}, nil)
	if s.decode.Isolation != nil {
		t.Fatal("DECODE_IN_PROCESS=1: the service has decoder processes")
	}
	_, png := samplePage(t)
	if status, body := postForm(t, ts.URL+"/predict_image", upload{Field: "file", Name: "p.png", CType: "image/png", Data: png}); status != 200 {
		t.Errorf("in process: %d %.300s", status, body)
	}
	resp, err := http.Get(ts.URL + "/info")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(info), `"decode_in_process":true,"decode_timeout_s":0,"decode_memory_mb":0`) {
		t.Errorf("/info limits: %s", info)
	}
}

// TestPDFiumService: with PDF_RENDERER=pdfium the service renders PDFs with
// PDFium and says so in /info; without the library it does not start.
func TestPDFiumService(t *testing.T) {
	lib := os.Getenv("ARCHIVEKIT_PDFIUM")
	if lib == "" || testing.Short() {
		t.Skip("needs ARCHIVEKIT_PDFIUM (eval \"$(make -s env)\" sets it) and runs the service")
	}
	_, err := newServer(testOptions(t), func(k string) (string, bool) {
		v, ok := map[string]string{"PDF_RENDERER": "pdfium", "PDFIUM_LIBRARY": "/nonexistent/libpdfium.so"}[k]
		return v, ok
	}, io.Discard)
	if pdfium.Loaded() == "" && (err == nil || !strings.Contains(err.Error(), "PDFIUM_LIBRARY")) {
		t.Errorf("PDFium missing: %v, want an error naming PDFIUM_LIBRARY", err)
	}
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "PDF_RENDERER": "pdfium", "PDFIUM_LIBRARY": lib}, nil)
	pdf := labelledPDF(3, "<< /Nums [0 << /S /A >>] >>")
	status, body := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "a.pdf", CType: "application/pdf", Data: pdf})
	if status != 200 || !strings.Contains(string(body), `"label":"C"`) {
		t.Errorf("%d %.300s", status, body)
	}
	resp, err := http.Get(ts.URL + "/info")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(info), `"pdf_renderer":"pdfium"`) {
		t.Errorf("/info: %s", info)
	}
}
