package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvShared names the shared folder (the one holding data/); `make test`
// sets it. When it is set, missing sample data fails the test instead of
// skipping it, so a broken set-up cannot pass as a green run.
const EnvShared = "ARCHIVEKIT_SHARED"

// Data returns the path of rel under shared/data: under $ARCHIVEKIT_SHARED
// when set (the test fails when rel is missing there), else found by walking
// up from the working directory (the test is skipped when it is not found).
func Data(t testing.TB, rel string) string {
	t.Helper()
	if root := os.Getenv(EnvShared); root != "" {
		p := filepath.Join(root, "data", rel)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("shared data %s: %v (%s=%s)", rel, err, EnvShared, root)
		}
		return p
	}
	dir, _ := os.Getwd()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "data", rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("shared data %s not found above %s (set %s)", rel, dir, EnvShared)
	return ""
}

// Path returns the path of name under shared/data/translator (see Data).
func Path(t testing.TB, name string) string {
	t.Helper()
	return Data(t, filepath.Join("translator", name))
}
