package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNormaliseAndTags(t *testing.T) {
	for _, c := range []struct {
		in, norm string
		tag      bool
	}{
		{"v1.2.0", "1.2.0", true},
		{"1.2.0-beta", "1.2.0-beta", true},
		{" v1.2.0-beta\n", "1.2.0-beta", false}, // white space is no tag
		{"test", "test", false},
		{"vit", "it", false},
		{"v", "", false},
		{"release-1", "release-1", false},
	} {
		if got := Normalise(c.in); got != c.norm {
			t.Errorf("Normalise(%q) = %q, want %q", c.in, got, c.norm)
		}
		if got := IsVersionTag(c.in); got != c.tag {
			t.Errorf("IsVersionTag(%q) = %v, want %v", c.in, got, c.tag)
		}
	}
}

func TestCitationVersion(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		body, want, err string
	}{
		{"cff-version: 1.2.0\nversion: 1.4.0\n", "1.4.0", ""},
		{"version: '1.4.0-beta' # released\n", "1.4.0-beta", ""},
		{"authors:\n  - name: x\n    version: 3\nversion: \"v2\"\n", "v2", ""},
		{"authors:\n  - version: 3\n", "", "no top-level version key"},
		{"version:\n", "", "empty version"},
	} {
		p := filepath.Join(dir, "CITATION.cff")
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := CitationVersion(p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.body, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.body, got, err, c.want)
		}
	}
}
