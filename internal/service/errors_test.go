package service

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClipURLs: a URL over 300 bytes is shortened in a message, saying its
// length; shorter ones, and the rest of the message, are kept; a cut never
// splits a character.
func TestClipURLs(t *testing.T) {
	long := "https://iiif.example.org/" + strings.Repeat("ž", 40000) + "/full/max/0/default.jpg"
	for _, c := range []struct{ in, want string }{
		{"GET https://a.example/x.png: 404 Not Found", "GET https://a.example/x.png: 404 Not Found"},
		// a short URL followed by much punctuation (it panicked: a
		// client's book_url could end a request without an answer)
		{"book_url https://%zz" + strings.Repeat(")", 300) + " refused", "book_url https://%zz" + strings.Repeat(")", 300) + " refused"},
		{"image not fetched: GET " + long + ": 404", "image not fetched: GET " + long[:199] + "…" + long[len(long)-59:] + fmt.Sprintf(" (a URL of %d bytes): 404", len(long))},
	} {
		got := ClipURLs(c.in)
		if got != c.want {
			t.Errorf("ClipURLs(%.80q) = %.400q\nwant %.400q", c.in, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("not UTF-8: %.80q", got)
		}
	}
}
