package service

import "testing"

func TestClientName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"page.png", "page.png"},
		{"scans/page.png", "page.png"},
		{`C:\scans\page.png`, "page.png"},
		{"../../etc/passwd", "passwd"},
		{"dir/", "dir"},
		{"", ""},
		{"/", ""},
		{".", ""},
		{"..", ""},
		{`a\..`, ""},
		// Clients' escapes: the HTML standard's %22 (a browser, Node's
		// fetch), aiohttp's UTF-8 bytes; other percent signs stay.
		{`z%C3%A1znam %22%C4%8D%22.xml`, `záznam "č".xml`},
		{`záznam %22č%22.xml`, `záznam "č".xml`},
		{"%C3%9Ast%C3%AD.xml", "Ústí.xml"},
		{"100%.xml", "100%.xml"},
		{"a%20b.xml", "a%20b.xml"},
		{"%C3%28.xml", "%C3%28.xml"}, // not UTF-8: kept
		{"dir%2F..%2Fx%C3%A1.xml", "xá.xml"},
	} {
		if got := ClientName(c.in); got != c.want {
			t.Errorf("ClientName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
