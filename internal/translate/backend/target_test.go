package backend

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// pairs is a backend offering a fixed set of pairs.
type pairs map[string]bool

func (p pairs) Name() string { return "pairs" }
func (p pairs) Supports(_ context.Context, src, tgt string) error {
	if p[src+"-"+tgt] {
		return nil
	}
	return fmt.Errorf("language pair %s-%s is not offered", src, tgt)
}
func (p pairs) Translate(context.Context, string, string, string) (string, error) { return "", nil }
func (p pairs) Close() error                                                      { return nil }

func TestOffersTarget(t *testing.T) {
	be := pairs{"cs-en": true, "de-en": true}
	sources := []string{"cs", "de", "en", "pl"}
	for _, c := range []struct {
		source, target string
		err            string // "" when offered
	}{
		{"cs", "en", ""},
		{"auto", "en", ""},
		{"en", "en", ""}, // each document says it is in the target language
		{"pl", "en", "source language pl, target language en: language pair pl-en is not offered"},
		{"auto", "xx", "target language xx: the backend translates into it from none of the languages detection tells (language pair pl-xx is not offered)"},
		{"auto", "cs", "target language cs: the backend translates into it from none"},
	} {
		err := OffersTarget(context.Background(), be, c.source, c.target, sources)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("OffersTarget(%s, %s) = %v, want %q", c.source, c.target, err, c.err)
		}
	}
}

// guessed is a backend whose pairs are a guess (mtapi's built-in list).
type guessed struct{ pairs }

func (guessed) PairsGuessed(context.Context) bool { return true }

// A backend whose pairs are a guess refuses no target ahead of a document.
func TestOffersTargetGuessed(t *testing.T) {
	if err := OffersTarget(context.Background(), guessed{pairs{"cs-en": true}}, "auto", "xx", []string{"cs"}); err != nil {
		t.Errorf("guessed pairs refused a target: %v", err)
	}
}
