package vocabharvest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpecColumns pins the written vocabulary to the five-column form of
// spec translation 2.5: source_lemma,target_translation,source,source_id,uri.
func TestSpecColumns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "vocabulary.csv")
	if err := Write(out, []Term{{Source: "hrob", Target: "grave", Origin: OriginArch, SourceID: "HES-1", URI: "https://example.org/HES-1"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\r\n"), "\n")
	if len(lines) != 2 || strings.TrimRight(lines[0], "\r") != "source_lemma,target_translation,source,source_id,uri" {
		t.Errorf("written file:\n%s", b)
	}
	if !strings.HasPrefix(lines[1], "hrob,grave,") || !strings.Contains(lines[1], "HES-1,https://example.org/HES-1") {
		t.Errorf("row %q", lines[1])
	}
}
