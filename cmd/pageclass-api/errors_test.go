package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
)

// TestErrorReasons (issue 33 item 4) provokes over HTTP, through the real
// handlers of pageclass-api, each reason it answers, and decodes status,
// reason and detail. Reasons of the service package common to both
// services (starting, draining, overloaded, rate_limited, timeout,
// body_timeout, unauthorized, origin_not_allowed) are provoked in
// internal/service's TestErrorReasonsOverHTTP, the job reasons in
// translate-api's TestErrorReasons (the same internal/jobs handlers);
// internal (inference or a record failing) is not provoked.
func TestErrorReasons(t *testing.T) {
	books := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/notbook.xml" {
			w.Write([]byte(`<?xml version="1.0"?><page>not a book</page>`))
			return
		}
		http.NotFound(w, r)
	}))
	defer books.Close()
	host := strings.TrimPrefix(books.URL, "http://")
	_, port, _ := strings.Cut(host, ":")
	o := testOptions(t)
	o.MaxRender = time.Nanosecond // every PDF of two pages or more is over it after its first
	_, ts := startServer(t, o, map[string]string{"LOG_LEVEL": "ERROR", "MAX_UPLOAD_MB": "1", EnvMaxPDFPages: "3", EnvBookHosts: host}, nil)

	name, png := samplePage(t)
	img := upload{Field: "file", Name: name, CType: "image/png", Data: png}
	pdf := func(n int) upload {
		return upload{Field: "file", Name: "scan.pdf", CType: "application/pdf", Data: makePDF(n)}
	}
	field := func(k, v string) upload { return upload{Field: k, Data: []byte(v)} }
	newer := upload{Field: "document_json", Name: "x.document.json", CType: "application/json", Data: []byte(`{"schema_version":"9.0","doc_id":"x"}`)}
	tests := []struct {
		reason service.Reason
		status int
		detail string
		path   string
		parts  []upload
		ctype  string // a raw body of this type instead of the parts
	}{
		{reason: service.ReasonBadRequest, status: 400, detail: "the multipart form cannot be read", path: "/predict_image", ctype: "multipart/form-data"},
		{reason: service.ReasonBadField, status: 422, detail: `"file"`, path: "/predict_image", parts: []upload{field("topn", "3")}},
		// The image sent as the body itself (it was 422, file required).
		{reason: service.ReasonUnsupportedMediaType, status: 415, detail: "Content-Type image/png is not supported: send the page as multipart/form-data", path: "/predict_image", ctype: "image/png"},
		{reason: service.ReasonBadField, status: 422, detail: `"topn"`, path: "/predict_image", parts: []upload{img, field("topn", "99")}},
		{reason: service.ReasonBadField, status: 422, detail: "the pages field selects pages of a PDF", path: "/predict_image", parts: []upload{img, field("pages", "1")}},
		{reason: service.ReasonBadField, status: 422, detail: `"scan.pdf": `, path: "/predict_document", parts: []upload{pdf(2), field("pages", "5")}},
		{reason: service.ReasonUnsupportedFormat, status: 400, detail: `file "scan.pdf" has content type "application/pdf": /predict_image accepts image/* only`, path: "/predict_image", parts: []upload{pdf(1)}},
		{reason: service.ReasonUnsupportedFormat, status: 400, detail: "/predict_document accepts application/pdf only", path: "/predict_document", parts: []upload{img}},
		{reason: service.ReasonUnsupportedFormat, status: 422, detail: "is labelled application/pdf but is not a PDF", path: "/predict_document", parts: []upload{{Field: "file", Name: "page.pdf", CType: "application/pdf", Data: png}}},
		{reason: service.ReasonUnsupportedFormat, status: 422, detail: "is labelled application/pdf but is not a PDF", path: "/predict_document", parts: []upload{{Field: "file", Name: "notes.pdf", CType: "application/pdf", Data: []byte("minutes of the meeting\n")}}},
		{reason: service.ReasonUndecodable, status: 422, detail: `"broken.png" cannot be decoded`, path: "/predict_image", parts: []upload{{Field: "file", Name: "broken.png", CType: "image/png", Data: png[:200]}}},
		{reason: service.ReasonSchemaTooNew, status: 422, detail: "document_json was written by a newer schema", path: "/predict_image", parts: []upload{img, newer}},
		{reason: service.ReasonTooLarge, status: 413, detail: "MAX_UPLOAD_MB", path: "/predict_image", parts: []upload{{Field: "file", Name: "big.png", CType: "image/png", Data: make([]byte, 2<<20)}}},
		{reason: service.ReasonTooManyPixels, status: 413, detail: `"huge.png"`, path: "/predict_image", parts: []upload{{Field: "file", Name: "huge.png", CType: "image/png", Data: hostile.PNG(14000, 14000)}}},
		{reason: service.ReasonTooManyPages, status: 413, detail: `"scan.pdf" has 4 pages: at most 3 pages are classified per request (MAX_PDF_PAGES)`, path: "/predict_document", parts: []upload{pdf(4)}},
		{reason: service.ReasonTooManyPages, status: 422, detail: `"scan.tif" has 2 pages: /predict_image classifies one page`, path: "/predict_image", parts: []upload{{Field: "file", Name: "scan.tif", CType: "image/tiff",
			Data: hostile.TIFF(hostile.TIFFPage{W: 60, H: 80, Grey: 30}, hostile.TIFFPage{W: 60, H: 80, Grey: 200})}}},
		{reason: service.ReasonRenderBudget, status: 422, detail: `"scan.pdf": its pages cost more time than one request may spend on them`, path: "/predict_document", parts: []upload{pdf(2)}},
		{reason: service.ReasonUnknownVersion, status: 422, detail: "version v1.3 cannot be served", path: "/predict_image", parts: []upload{img, field("version", "v1.3")}},
		// the original tool's generation names this one's
		{reason: service.ReasonUnknownVersion, status: 422, detail: "(the ensemble's model of this family is v4.4)", path: "/predict_image", parts: []upload{img, field("version", "v4.3")}},
		{reason: service.ReasonBadBook, status: 422, detail: "/notbook.xml", path: "/predict_document", parts: []upload{field("book", books.URL+"/notbook.xml")}},
		{reason: service.ReasonHostNotAllowed, status: 422, detail: EnvBookHosts, path: "/predict_document", parts: []upload{field("book", "http://localhost:"+port+"/notbook.xml")}},
		{reason: service.ReasonFetchFailed, status: 422, detail: "404", path: "/predict_document", parts: []upload{field("book", books.URL+"/gone.json")}},
		{reason: service.ReasonNotFound, status: 404, detail: "missing.js", path: "/frontend/missing.js"},
		{reason: service.ReasonMethodNotAllowed, status: 405, detail: "Method Not Allowed", path: "/info"},
	}
	for _, tt := range tests {
		t.Run(string(tt.reason), func(t *testing.T) {
			var code int
			var body []byte
			switch {
			case tt.ctype != "":
				resp, err := http.Post(ts.URL+tt.path, tt.ctype, strings.NewReader("x"))
				if err != nil {
					t.Fatal(err)
				}
				code, body = resp.StatusCode, servicetest.ReadBody(t, resp)
			case tt.parts == nil && tt.status == 404:
				resp, err := http.Get(ts.URL + tt.path)
				if err != nil {
					t.Fatal(err)
				}
				code, body = resp.StatusCode, servicetest.ReadBody(t, resp)
			default:
				code, body = postForm(t, ts.URL+tt.path, tt.parts...)
			}
			a := servicetest.CheckError(t, code, body, tt.status, string(tt.reason), tt.detail)
			t.Logf("%d %s %.200s", a.Status, a.Reason, a.Detail)
		})
	}
	// The reasons are listed in the served OpenAPI document, and those its
	// responses name are real ones.
	servicetest.CheckOpenAPIReasons(t, ts.URL, service.Reasons())
}
