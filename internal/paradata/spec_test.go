package paradata

import "testing"

// TestSpecFileName pins the run metadata's name of spec page-classification
// 2.7, "{stamp}_page-classification.json", with the stamp of the shared
// example (pages-paradata-example/260530-102033_page-classification.json).
func TestSpecFileName(t *testing.T) {
	if got, want := FileName("260530-102033"), "260530-102033_page-classification.json"; got != want {
		t.Errorf("FileName = %q, want %q", got, want)
	}
}
