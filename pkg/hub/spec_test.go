package hub

import (
	"path/filepath"
	"testing"
)

// TestHomeDefault: with HUB_HOME unset the cache is archivekit/hub in the
// user cache folder (README; the images set HUB_HOME=/cache/hub, spec
// page-classification 8).
func TestHomeDefault(t *testing.T) {
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
