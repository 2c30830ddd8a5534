package batch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/guard"
)

// TestGroupByChars: batch limits count characters, not bytes.
func TestGroupByChars(t *testing.T) {
	items := []string{"žžžž", "čččč", "a"} // 4 runes (8 bytes) each
	cases := []struct {
		limit int
		want  string
	}{
		{0, "žžžž,čččč,a"},
		{9, "žžžž,čččč|a"}, // 4+1+4 = 9 characters fit; 8-byte items would not
		{8, "žžžž|čččč,a"}, // 4+1+1 = 6
		{11, "žžžž,čččč,a"},
		{2, "žžžž|čččč|a"},
	}
	for _, c := range cases {
		var parts []string
		for _, g := range groupByChars(items, c.limit) {
			parts = append(parts, strings.Join(g, ","))
		}
		if got := strings.Join(parts, "|"); got != c.want {
			t.Errorf("limit %d: %s, want %s", c.limit, got, c.want)
		}
	}
}

func TestSplitAnswer(t *testing.T) {
	cases := []struct {
		in   string
		want int
		out  string
	}{
		{"a\nb", 2, "a|b"},
		{"a\r\nb\n", 2, "a|b"},
		{"a\n", 2, "a|"},
		{"a\nb\n\n", 2, "a|b"},
		{"a b", 2, "a b"},
	}
	for _, c := range cases {
		if got := strings.Join(splitAnswer(c.in, c.want), "|"); got != c.out {
			t.Errorf("splitAnswer(%q, %d) = %q, want %q", c.in, c.want, got, c.out)
		}
	}
}

// TestRun: segments go out per page and language in document order; an
// unsupported detected language is left with its status and a warning,
// a given one is an error.
func TestRun(t *testing.T) {
	be := &pairs{unsupported: "xx"}
	segs := []*Segment{{Page: 1, Lang: "cs", Text: "a"}, {Page: 1, Lang: "xx", Text: "b"}, {Page: 1, Lang: "cs", Text: "c"}, {Page: 2, Lang: "cs", Text: "d"}}
	var c Counts
	b := &Batcher{Backend: be, Target: "en", Counts: &c}
	warn, err := b.Run(context.Background(), segs, true)
	if err != nil || len(warn) != 1 {
		t.Fatalf("Run: %v, warnings %q", err, warn)
	}
	var got []string
	for _, s := range segs {
		got = append(got, s.Out+"/"+string(s.Status))
	}
	if strings.Join(got, " ") != "A/ok /unsupported_lang C/ok D/ok" || strings.Join(be.calls, "|") != "a\nc|d" || c.Calls != 2 {
		t.Errorf("got %q, calls %q, counts %+v", got, be.calls, c)
	}
	if _, err := b.Run(context.Background(), []*Segment{{Lang: "xx", Text: "b"}}, false); err == nil {
		t.Error("a given unsupported language is not an error")
	}
}

// TestRunForeignScript: segments tagged with a script no supported
// language is written in (und-Hebr) are not sent, whether the source was
// detected or given: they get unsupported_lang, one warning names the
// script, the run goes on and the other segments are translated, even
// with a backend that accepts every pair.
func TestRunForeignScript(t *testing.T) {
	for _, detected := range []bool{true, false} {
		be := &pairs{}
		segs := []*Segment{{Page: 1, Lang: "de", Text: "a"}, {Page: 1, Lang: "und-Hebr", Text: "ב"}, {Page: 2, Lang: "und-Hebr", Text: "ג"}}
		warn, err := (&Batcher{Backend: be, Target: "en", Counts: &Counts{}}).Run(context.Background(), segs, detected)
		if err != nil {
			t.Fatalf("detected %v: %v", detected, err)
		}
		var got []string
		for _, s := range segs {
			got = append(got, s.Out+"/"+string(s.Status))
		}
		if strings.Join(got, " ") != "A/ok /unsupported_lang /unsupported_lang" || strings.Join(be.calls, "|") != "a" {
			t.Errorf("detected %v: got %q, calls %q", detected, got, be.calls)
		}
		if len(warn) != 1 || !strings.Contains(warn[0], `"und-Hebr"`) || !strings.Contains(warn[0], "Hebrew script: not a supported source language") {
			t.Errorf("detected %v: warnings %q", detected, warn)
		}
	}
}

// pairs is a backend that upper-cases and refuses one source language.
type pairs struct {
	unsupported string
	calls       []string
}

func (p *pairs) Name() string { return "pairs" }
func (p *pairs) Close() error { return nil }
func (p *pairs) Supports(_ context.Context, src, _ string) error {
	if src == p.unsupported {
		return errors.New("unsupported pair")
	}
	return nil
}
func (p *pairs) Translate(_ context.Context, text, _, _ string) (string, error) {
	p.calls = append(p.calls, text)
	return strings.ToUpper(text), nil
}

// preparing records the groups announced to it (backend.Preparer) and
// the calls made before each.
type preparing struct {
	pairs
	prepared []string
}

func (p *preparing) Prepare(_ context.Context, segments []string, src, tgt string) {
	p.prepared = append(p.prepared, fmt.Sprintf("%s:%s %q after %d calls", src, tgt, segments, len(p.calls)))
}

// TestRunPrepares: each page's group of a supported language is announced
// once, before it is translated.
func TestRunPrepares(t *testing.T) {
	be := &preparing{pairs: pairs{unsupported: "xx"}}
	segs := []*Segment{{Page: 1, Lang: "cs", Text: "a"}, {Page: 1, Lang: "xx", Text: "b"}, {Page: 1, Lang: "cs", Text: "c"}, {Page: 2, Lang: "cs", Text: "d"}}
	if _, err := (&Batcher{Backend: be, Target: "en", Counts: &Counts{}}).Run(context.Background(), segs, true); err != nil {
		t.Fatal(err)
	}
	want := []string{`cs:en ["a" "c"] after 0 calls`, `cs:en ["d"] after 1 calls`}
	if strings.Join(be.prepared, "|") != strings.Join(want, "|") {
		t.Errorf("prepared %q, want %q", be.prepared, want)
	}
}

func TestTally(t *testing.T) {
	segs := []*Segment{{Lang: "cs", Status: backend.OK}, {Lang: "de", Status: backend.Retried}, {Lang: "cs", Status: backend.Vocabulary},
		{Lang: "cs", Status: backend.Untranslated}, {Lang: "xx", Status: backend.UnsupportedLang}}
	o := Tally(segs)
	if o.Sent != 4 || o.Translated != 3 || o.Untranslated != 1 || o.Unsupported != 1 || o.Languages["cs"] != 2 || o.Languages["de"] != 1 {
		t.Errorf("Tally = %+v", o)
	}
}

// rejecting is a backend whose every reply its guard rejects.
type rejecting struct{ pairs }

func (r *rejecting) Translate(_ context.Context, text, _, _ string) (string, error) {
	r.calls = append(r.calls, text)
	return "", fmt.Errorf("rejecting: %w", &guard.Rejection{Reason: "too_short", Detail: "1 character"})
}

// TestRunContextEnded: a group whose reply is rejected after its context
// ended (another page failed) reports the context's end, not the
// rejection, and is not retried, so the failure that ended it is the one
// reported. Before, the rejection was the page's error, and could be the
// document's.
func TestRunContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	be := &rejecting{}
	b := &Batcher{Backend: be, Target: "en", Counts: &Counts{}}
	_, err := b.Run(ctx, []*Segment{{Page: 1, Lang: "cs", Text: "hrob"}}, true)
	if !errors.Is(err, context.Canceled) || len(be.calls) != 1 {
		t.Fatalf("%v after %d calls, want context.Canceled and no retry", err, len(be.calls))
	}
}
