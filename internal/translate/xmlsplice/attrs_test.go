package xmlsplice

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestManyAttributes: an element with more attributes than the limit is a
// LimitError found before decoding (the decoder's cost grows with their
// square: 400,000 held one request 215 s); '=' in quoted values, comments,
// CDATA and processing instructions is not counted.
func TestManyAttributes(t *testing.T) {
	attrs := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, ` a%d="x"`, i)
		}
		return b.String()
	}
	for _, tt := range []struct {
		name string
		src  string
		over bool
	}{
		{"at the limit", "<r" + attrs(1000) + "/>", false},
		{"over it", "<r>\n<s" + attrs(1001) + "/></r>", true},
		{"400,000", "<r" + attrs(400_000) + "/>", true},
		{"= in values, comments, CDATA, PIs", `<?xml version="1.0"?><r a="` + strings.Repeat("=", 5000) + `"><!--` + strings.Repeat("x=", 5000) + `--><![CDATA[` + strings.Repeat("=", 5000) + `]]><?pi ` + strings.Repeat("=", 5000) + `?></r>`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src))
			var le *LimitError
			if got := errors.As(err, &le); got != tt.over || (got && le.What != "attributes per element") {
				t.Errorf("err %v, want a limit error: %v", err, tt.over)
			}
			if tt.name == "over it" && le != nil && le.Line != 2 {
				t.Errorf("line %d, want 2", le.Line)
			}
		})
	}
}
