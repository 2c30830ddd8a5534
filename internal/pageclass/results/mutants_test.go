package results_test

import (
	"path/filepath"
	"testing"

	"archivekit/internal/pageclass/results"
)

// If broken: a page numbered with a 9 ("scan-19") is not read as a page
// of its document, and gets a FILE row of its own with PAGE empty.
func TestSplitPageSuffixNines(t *testing.T) {
	for _, c := range []struct {
		stem, name string
		page       int
	}{
		{"a-19", "a", 19},
		{"scan_9", "scan", 9},
		{"guide-90", "guide", 90},
		{"report-999", "report", 999},
		{"odd-1:", "odd-1:", 0}, // ':' follows '9'
		{"odd-/1", "odd-/1", 0}, // '/' precedes '0'
	} {
		if name, page := results.SplitPageSuffix(c.stem); name != c.name || page != c.page {
			t.Errorf("SplitPageSuffix(%q) = %q, %d; want %q, %d", c.stem, name, page, c.name, c.page)
		}
	}
	k, err := results.ImageKey(filepath.FromSlash("/in"), filepath.FromSlash("/in/box/a-19.png"))
	if err != nil || k.File != "box/a" || k.Page != 19 {
		t.Errorf("ImageKey: %+v, %v; want box/a page 19", k, err)
	}
}
