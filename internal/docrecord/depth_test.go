package docrecord

import (
	"strings"
	"testing"
)

// TestParseDeepNesting: a record nested deeper than MaxDepth is refused
// with an error; millions of levels (a 5.5 MB upload of '[') overflowed the
// decoder's stack and took the service down with them.
func TestParseDeepNesting(t *testing.T) {
	for _, tt := range []struct {
		name string
		data string
		ok   bool
	}{
		{"5.5 million arrays", strings.Repeat("[", 5_500_000), false},
		{"an object nested past the limit", `{"doc_id":"x","a":` + strings.Repeat(`{"b":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth) + "}", false},
		{"a record nested 100 deep", `{"doc_id":"x","schema_version":"1.0","a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data))
			if tt.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "nested more than")) {
				t.Errorf("err %v, want ok: %v", err, tt.ok)
			}
		})
	}
}
