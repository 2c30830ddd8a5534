package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A token holding a character a header cannot carry is a usage error
// naming where it came from, the token itself never printed; an address
// with spaces around it is trimmed, and one that is no http(s) URL is a
// usage error naming the flag and the address. Before, the token was "no
// answer from the service" (exit 75) and the address an error answer
// (exit 3).
func TestTokenAndServerChecked(t *testing.T) {
	ts := fakeService(t)
	defer ts.Close()
	png := filepath.Join(t.TempDir(), "page.png")
	if err := os.WriteFile(png, []byte("\x89PNG\r\n\x1a\nrest"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		env     string // API_TOKEN
		args    []string
		code    int
		want    string
		mustNot string
	}{
		{"API_TOKEN newline", "tok3n\n", []string{"-server", ts.URL}, 1, "API_TOKEN holds a control character", "tok3n"},
		{"-token newline", "", []string{"-server", ts.URL, "-token", "tok3n\r\n"}, 1, "-token holds a control character", "tok3n"},
		{"-server trailing space", "", []string{"-server", ts.URL + " "}, 0, "PHOTO", ""},
		{"-url leading space", "", []string{"-url", " " + ts.URL}, 0, "PHOTO", ""},
		{"-server no scheme", "", []string{"-server", strings.TrimPrefix(ts.URL, "http://")}, 1, `-server "` + strings.TrimPrefix(ts.URL, "http://") + `": not a service address`, ""},
		{"-server inner space", "", []string{"-server", "http://127.0.0.1 :8612"}, 1, `-server "http://127.0.0.1 :8612": not a service address`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("API_TOKEN", tc.env)
			var out, errOut bytes.Buffer
			code := run(append([]string{"-file", png, "-version", "v2.4", "-topn", "2"}, tc.args...), &out, &errOut)
			all := out.String() + errOut.String()
			if code != tc.code || !strings.Contains(all, tc.want) || (tc.mustNot != "" && strings.Contains(all, tc.mustNot)) {
				t.Errorf("exit %d, %q; want %d with %q", code, all, tc.code, tc.want)
			}
		})
	}
}
