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
