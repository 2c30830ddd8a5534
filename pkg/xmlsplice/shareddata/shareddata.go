// Package shareddata locates the translator's real sample data (the shared
// data directory next to the repository) for tests, which read it in place.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Path returns the path of name under shared/data/translator, found by
// walking up from the working directory. The test is skipped when the shared
// data is not present.
func Path(t testing.TB, name string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "data", "translator", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("shared data %s not found above %s", name, dir)
	return ""
}
