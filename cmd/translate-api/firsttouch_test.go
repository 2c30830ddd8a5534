package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/translate/translator/translatortest"
)

const pageALTO = `<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1" WIDTH="100" HEIGHT="100"><PrintSpace>
<TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="archeologický" HPOS="1" VPOS="1" WIDTH="10" HEIGHT="5"/><SP/><String CONTENT="výzkum" HPOS="12" VPOS="1" WIDTH="10" HEIGHT="5"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>`

// TestDocumentByContent: as the command line, a document is taken by its
// content whatever its extension: an ALTO file named .alto is translated
// (before: 422, "does not end in .xml").
func TestDocumentByContent(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	for name, dispo := range map[string]string{"page.alto": "page_en.alto", "page.ALTO.XML": "page_en.ALTO.XML", "scan-09": "scan-09_en", "page.txt": "page_en.txt"} {
		body, ct := multipartBody(t, part{Field: "file", Name: name, File: true, Data: []byte(pageALTO)}, part{Field: "source_lang", Data: []byte("cs")})
		resp := post(t, ts.URL+"/translate", ct, body)
		b := readBody(t, resp)
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`CONTENT="archaeological"`)) {
			t.Fatalf("%s: status %d: %.300s", name, resp.StatusCode, b)
		}
		if got := resp.Header.Get("Content-Disposition"); got != `attachment; filename="`+dispo+`"` {
			t.Errorf("%s: Content-Disposition %q, want %s", name, got, dispo)
		}
	}
}

// TestUnreachableBackendBody: a translation service that refuses the
// connection gives a 5xx whose body names no address (neither the URL
// nor "dial tcp 127.0.0.1:<port>"), and fails at the first attempt.
func TestUnreachableBackendBody(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	_, port, _ := strings.Cut(strings.TrimPrefix(url, "http://"), ":")
	_, ts := startServer(t, testEnv(url, map[string]string{"MTAPI_MAX_RETRIES": "3", "MTAPI_BACKOFF_BASE_S": "60"}))
	body, ct := multipartBody(t, part{Field: "file", Name: "p.alto.xml", File: true, Data: []byte(pageALTO)}, part{Field: "source_lang", Data: []byte("cs")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	if resp.StatusCode < 500 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	for _, leak := range []string{"127.0.0.1", ":" + port, "dial tcp 1", "http://"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("body names an address (%q): %s", leak, b)
		}
	}
	if !strings.Contains(string(b), "cannot be reached (connection refused)") {
		t.Errorf("body does not say the backend cannot be reached: %s", b)
	}
	if _, err := strconv.Atoi(port); err != nil {
		t.Fatalf("port %q", port)
	}
}
