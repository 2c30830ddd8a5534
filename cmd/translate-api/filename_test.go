package main

import (
	"encoding/json"
	"strings"
	"testing"

	"archivekit/internal/translate/translator/translatortest"
)

// TestUploadNameNotUTF8: a document uploaded under a name that is not
// UTF-8 (a cp852 name from a zip made on Windows, sent by a client that
// passes the bytes as they are) is answered, as XML, with the ASCII file
// name only, "_" for each stray byte (its filename* was the \xNN text
// percent-encoded, %5Cx8e%5Cxe1dost_en.alto.xml), and, as JSON, with the
// name written \xNN as the run metadata writes it (it was U+FFFD).
func TestUploadNameNotUTF8(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1" WIDTH="100" HEIGHT="100"><PrintSpace>
<TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="archeologický" HPOS="1" VPOS="1" WIDTH="10" HEIGHT="5"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>`
	for _, tc := range []struct {
		format string
		check  func(dispo string, body []byte) string // what is wrong, "" when nothing
	}{
		{"xml", func(dispo string, _ []byte) string {
			if want := `attachment; filename="__dost_en.alto.xml"`; dispo != want {
				return "Content-Disposition " + dispo + ", want " + want
			}
			return ""
		}},
		{"json", func(_ string, body []byte) string {
			var a struct{ Name string }
			if err := json.Unmarshal(body, &a); err != nil || a.Name != `\x8e\xe1dost_en.alto.xml` {
				return "name " + a.Name + `, want \x8e\xe1dost_en.alto.xml`
			}
			return ""
		}},
	} {
		body := "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\x8e\xe1dost.alto.xml\"\r\nContent-Type: application/xml\r\n\r\n" + doc +
			"\r\n--B\r\nContent-Disposition: form-data; name=\"source_lang\"\r\n\r\ncs" +
			"\r\n--B\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\n" + tc.format + "\r\n--B--\r\n"
		resp := post(t, ts.URL+"/translate", "multipart/form-data; boundary=B", strings.NewReader(body))
		b := readBody(t, resp)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %.300s", tc.format, resp.StatusCode, b)
		}
		if msg := tc.check(resp.Header.Get("Content-Disposition"), b); msg != "" {
			t.Errorf("%s: %s", tc.format, msg)
		}
	}
}
