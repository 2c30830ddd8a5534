package version

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStringIsTheVersionFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(data))
	if want == "" || strings.ContainsAny(want, " \t\n") {
		t.Fatalf("VERSION file holds %q: want one word", data)
	}
	if got := String(); got != want {
		t.Errorf("String() = %q, want %q (VERSION)", got, want)
	}
	if got := Line("pageclass"); !strings.HasPrefix(got, "pageclass "+want+" (go") {
		t.Errorf("Line = %q", got)
	}
}

func TestSetUserAgent(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	SetUserAgent(req)
	if got, want := req.Header.Get("User-Agent"), "archivekit/"+String(); got != want {
		t.Errorf("User-Agent = %q, want %q", got, want)
	}
	req.Header.Set("User-Agent", "mine")
	SetUserAgent(req)
	if got := req.Header.Get("User-Agent"); got != "mine" {
		t.Errorf("a caller's User-Agent was replaced: %q", got)
	}
}

// A build stamped with its commit says it in --version: two builds of one
// version (a rebuild after changes) were told apart by nothing.
func TestLineNamesTheCommit(t *testing.T) {
	old := commit
	t.Cleanup(func() { commit = old })
	commit = "3f2a9c1d0b7e+dirty"
	if got := Line("translate"); !strings.HasPrefix(got, "translate "+String()+" (commit 3f2a9c1d0b7e+dirty, go") || Commit() != commit {
		t.Errorf("Line = %q, Commit = %q", got, Commit())
	}
}
