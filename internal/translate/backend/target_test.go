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

// listed is a backend that lists its pairs (as mtapi does).
type listed struct{ pairs }

func (l listed) Models(context.Context) ([]string, string) {
	var out []string
	for p := range l.pairs {
		out = append(out, p)
	}
	return out, "api"
}

// A backend that lists its pairs is refused a target saying which targets
// it has (the error named a pair of the last language tried, "hi-de").
func TestOffersTargetListed(t *testing.T) {
	be := listed{pairs{"cs-en": true, "de-en": true, "en-cs": true}}
	err := OffersTarget(context.Background(), be, "auto", "fr", []string{"hi", "cs", "de"})
	if err == nil || err.Error() != "target language fr: the backend does not translate into it; it translates into cs, en" {
		t.Errorf("OffersTarget = %v", err)
	}
	// A target it has, from none of the languages detection tells, is not
	// said to be missing.
	err = OffersTarget(context.Background(), be, "auto", "cs", []string{"de", "cs"})
	if err == nil || !strings.Contains(err.Error(), "target language cs: the backend translates into it from none of the languages detection tells") {
		t.Errorf("OffersTarget(cs) = %v", err)
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
