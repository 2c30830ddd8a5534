package service

import (
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ClientName reduces a file name sent by a client to its last element
// (after either kind of slash), so that it can only label outputs and never
// becomes a path. It is "" when no name is left ("", "/", "." or "..").
//
// The escapes clients put in a multipart filename are undone first:
// browsers and Node's fetch write a quote, CR and LF as %22, %0D and %0A
// (the HTML standard's form encoding), and some clients (aiohttp) write
// every byte of a UTF-8 name outside ASCII as %XX: a name of ASCII
// characters alone whose %XX escapes decode to UTF-8 letters outside ASCII
// is decoded whole. Other percent signs are kept ("100%.xml", "a%20b.xml"
// stays as sent).
func ClientName(name string) string {
	name = unescapeName(name)
	name = path.Base("/" + strings.ReplaceAll(name, `\`, "/"))
	if name == "/" || name == "." || name == ".." {
		return ""
	}
	return name
}

// highEscape is a percent escape of a byte outside ASCII.
var highEscape = regexp.MustCompile(`%[89A-Fa-f][0-9A-Fa-f]`)

// unescapeName undoes a client's escapes in a file name (ClientName).
func unescapeName(name string) string {
	if highEscape.MatchString(name) && isASCII(name) {
		if dec, err := url.PathUnescape(name); err == nil && utf8.ValidString(dec) {
			return dec
		}
	}
	return strings.NewReplacer("%22", `"`, "%0D", "\r", "%0d", "\r", "%0A", "\n", "%0a", "\n").Replace(name)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
