package translator

import (
	"bytes"
	"encoding/csv"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
)

// The log's unit_status column maps today's statuses onto the unit status
// vocabulary: ok, rerun, approx_alignment, untranslated, unsupported_lang,
// and in_target beyond the original's.
func TestUnitStatusColumn(t *testing.T) {
	rows := []alto.LogRow{
		{File: "d", Page: 1, Line: "l1", Source: "a", Target: "A", Status: backend.OK},
		{File: "d", Page: 1, Line: "l2", Source: "b", Target: "B", Status: backend.OK, Approx: true},
		{File: "d", Page: 1, Line: "l3", Source: "c", Target: "C", Status: backend.Retried},
		{File: "d", Page: 1, Line: "l4", Source: "d", Status: backend.Untranslated},
		{File: "d", Page: 1, Line: "l5", Source: "e", Status: backend.UnsupportedLang},
		{File: "d", Line: "//f", Source: "f", Target: "F", Status: backend.Vocabulary},
		{File: "d", Line: "//g", Source: "g", Status: backend.MixedContent},
		{File: "d", Line: "//h", Source: "h", Target: "H"},
		{File: "d", Line: "//i", Source: "i", Status: backend.InTarget},
	}
	want := []string{"ok", "approx_alignment", "rerun", "untranslated", "unsupported_lang", "ok", "untranslated", "ok", "in_target"}
	var buf bytes.Buffer
	if err := WriteLog(&buf, rows, "cs", "en"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// unit_status is the eighth column, followed by the language order's
	// source_lang and lang_source (issue 33).
	if h := recs[0][7]; h != "unit_status" {
		t.Fatalf("eighth column %q", h)
	}
	for i, w := range want {
		if got := recs[i+1][7]; got != w {
			t.Errorf("row %d (%s): unit_status %q, want %q", i+1, rows[i].Status, got, w)
		}
	}
}
