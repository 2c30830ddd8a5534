package backendtest

import (
	"context"
	"testing"
)

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

func TestBackend(t *testing.T) {
	var b Backend
	got, err := b.Translate(context.Background(), "hrob\nkostel", "cs", "en")
	if err != nil || got != "grave\nKOSTEL" || b.Calls() != 1 || b.Supports(context.Background(), "cs", "en") != nil {
		t.Errorf("Translate = %q, %v; %d calls", got, err, b.Calls())
	}
}

// TestThen: a Backend with Then answers the translation so rewritten,
// here each line suffixed.
func TestThen(t *testing.T) {
	b := Backend{Then: Suffixed(" \x01")}
	got, err := b.Translate(context.Background(), "hrob\nkostel", "cs", "en")
	if err != nil || got != "grave \x01\nKOSTEL \x01" {
		t.Errorf("Translate = %q, %v", got, err)
	}
}
