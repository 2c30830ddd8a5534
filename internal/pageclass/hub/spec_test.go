package hub

import (
	"path/filepath"
	"runtime"
	"testing"
)

// TestHomeDefault: with HUB_HOME unset the cache is archivekit/hub in the
// user cache folder (README; the images set HUB_HOME=/cache/hub, spec
// page-classification 8).
func TestHomeDefault(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("XDG_CACHE_HOME sets the user cache folder on Linux only")
	}
	cache := t.TempDir()
	t.Setenv(EnvHome, "")
	t.Setenv("XDG_CACHE_HOME", cache)
	c, err := FromEnv("http://default.test")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "archivekit", "hub"); c.Home != want {
		t.Errorf("Home = %q, want %q", c.Home, want)
	}
}
