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
	} {
		if got := ClientName(c.in); got != c.want {
			t.Errorf("ClientName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
