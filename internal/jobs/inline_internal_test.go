package jobs

import (
	"strings"
	"testing"
)

// TestInline: GET /jobs/{id}/results gives a JSON answer as output and a
// UTF-8 text or XML one as text; any other JSON or text answer is at its
// url only, and not_inline says why (an ISO-8859-1 document keeps its
// encoding); an image is at its url only, with nothing to say.
func TestInline(t *testing.T) {
	latin1 := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r>P\xf8\xedbram</r>"
	for _, c := range []struct {
		name, ctype, body string
		output, text      bool
		why               string
	}{
		{"json", "application/json", `{"a":1}`, true, false, ""},
		{"bad json", "application/json", `{"a":`, false, false, "not valid JSON"},
		{"utf-8 xml", "application/xml", "<r>Příbram</r>", false, true, ""},
		{"hocr", "text/html; charset=utf-8", "<html/>", false, true, ""},
		{"iso-8859-1 xml", "application/xml", latin1, false, false, "not UTF-8"},
		{"image", "image/png", "\x89PNG\r\n\x1a\n", false, false, ""},
	} {
		ir := ItemResult{ContentType: c.ctype}
		inline(&ir, []byte(c.body))
		if (ir.Output != nil) != c.output || (ir.Text != nil) != c.text ||
			(c.why == "") != (ir.NotInline == "") || !strings.Contains(ir.NotInline, c.why) {
			t.Errorf("%s: output %s, text %v, not_inline %q; want output %v, text %v, not_inline with %q",
				c.name, ir.Output, ir.Text != nil, ir.NotInline, c.output, c.text, c.why)
		}
	}
}
