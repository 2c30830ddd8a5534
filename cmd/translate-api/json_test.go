package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/translator/translatortest"
)

// TestResponseFormatJSON: response_format=json answers the translated
// document (the same bytes as the XML answer), its statistics and each
// unit's status in one JSON body; another value is a 422 naming the field.
func TestResponseFormatJSON(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	file := part{Field: "file", Name: "p.alto.xml", File: true, Data: []byte(pageALTO)}
	src := part{Field: "source_lang", Data: []byte("cs")}

	body, ct := multipartBody(t, file, src)
	xmlResp := post(t, ts.URL+"/translate", ct, body)
	xmlAnswer := readBody(t, xmlResp)
	// The XML answer counts the document's warnings in a header (they were
	// only in the service's log), as many as the JSON answer lists.
	xmlWarnings := xmlResp.Header.Get("X-Translation-Warnings")

	body, ct = multipartBody(t, file, src, part{Field: "response_format", Data: []byte("json")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, %s: %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	// The limits applied to the request are in a header.
	if l := resp.Header.Get("X-Limits-Applied"); !strings.Contains(l, "max_upload_bytes=") || !strings.Contains(l, "memory_estimate_bytes=") {
		t.Errorf("X-Limits-Applied %q", l)
	}
	servicetest.MatchesSchema(t, openapiJSON, "TranslationJSON", b)
	var a jsonAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if xmlWarnings != fmt.Sprint(len(a.Warnings)) || resp.Header.Get("X-Translation-Warnings") != xmlWarnings {
		t.Errorf("X-Translation-Warnings %q (JSON answer: %q), want %d", xmlWarnings, resp.Header.Get("X-Translation-Warnings"), len(a.Warnings))
	}
	// Both answers carry the translation's licence: the JSON one in its
	// fields, the XML one (which has no field for it) in its headers.
	if a.License != "CC BY-NC-SA 4.0" || a.LicenseURL == "" {
		t.Errorf("JSON answer's licence %q %q, want CC BY-NC-SA 4.0 with its URL", a.License, a.LicenseURL)
	}
	for _, h := range []http.Header{xmlResp.Header, resp.Header} {
		if h.Get("X-Translation-License") != a.License || h.Get("Link") != "<"+a.LicenseURL+`>; rel="license"` {
			t.Errorf("licence headers X-Translation-License %q, Link %q; want %q and its URL", h.Get("X-Translation-License"), h.Get("Link"), a.License)
		}
		// and what translated it (the XML answer named it nowhere)
		if h.Get("X-Translation-Backend") != a.Backend || a.Backend == "" {
			t.Errorf("X-Translation-Backend %q, the JSON answer's backend %q", h.Get("X-Translation-Backend"), a.Backend)
		}
		// a page of an allowed origin may read every one of them (CORS)
		for k := range h {
			if (strings.HasPrefix(k, "X-Translation-") || k == "Link") && !slices.Contains(strings.Split(service.ExposedHeaders, ", "), k) {
				t.Errorf("%s is not among the headers exposed to other origins", k)
			}
		}
	}
	if !bytes.Equal([]byte(a.Document), xmlAnswer) {
		t.Errorf("document differs from the XML answer:\n%.300s\n%.300s", a.Document, xmlAnswer)
	}
	if a.Kind != "alto" || a.SourceLang != "cs" || a.TargetLang != "en" || a.Name != "p_en.alto.xml" || a.Tag != "en-t-cs-t0-und" {
		t.Errorf("answer %+v", a)
	}
	if a.Statistics.Units == 0 || a.Statistics.Translated != a.Statistics.Units || len(a.Units) != a.Statistics.Lines {
		t.Errorf("statistics %+v, %d units logged", a.Statistics, len(a.Units))
	}
	for _, u := range a.Units {
		// unit_status as the command line's log gives it (the aligned
		// lines of a page: ok; approx_alignment would say a line's words
		// were placed by proportion or it got none).
		if u.Status == "" || u.Source == "" || u.SourceLang != "cs" || u.LangSource != "given" || u.UnitStatus != "ok" {
			t.Errorf("unit %+v", u)
		}
	}
	// The source language was given: every unit's rule is "given".
	if a.LangSources["given"] != a.Statistics.Units {
		t.Errorf("lang_sources %v for %d units", a.LangSources, a.Statistics.Units)
	}

	body, ct = multipartBody(t, file, part{Field: "response_format", Data: []byte("yaml")})
	resp = post(t, ts.URL+"/translate", ct, body)
	if b := readBody(t, resp); resp.StatusCode != 422 || !strings.Contains(string(b), "response_format") {
		t.Errorf("response_format=yaml: %d %s", resp.StatusCode, b)
	}
}
