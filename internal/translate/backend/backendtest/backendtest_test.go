package backendtest

import "testing"

func TestTranslate(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Hrob a jáma", "grave and pit"},
		{"kostel 12 QZX0", "KOSTEL 12 QZX0"},
		{"sonda\n\nv hrob", "trench\n\nin grave"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := Translate(tc.in); got != tc.want {
			t.Errorf("Translate(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
