package guard

import (
	"context"
	"errors"
	"strings"
	"testing"

	"archivekit/internal/translate/backend"
)

func TestCheck(t *testing.T) {
	long := "Záchranný archeologický výzkum odkryl dva hroby a jámu z doby bronzové u obce."
	tests := []struct {
		name     string
		src, out string
		src2     string // target language; "" means en
		want     Reason // "" means accepted
	}{
		{"ordinary", long, "The rescue excavation uncovered two graves and a Bronze Age pit near the village.", "", ""},
		{"one word", "hrob", "grave", "", ""},
		{"place name copied", "Kutná Hora", "Kutná Hora", "", ""},
		{"code copied", "MTX 2015 013 07", "MTX 2015 013 07", "", ""},
		{"empty", "hrob", "  \n", "", Empty},
		{"whitespace source", "  ", "", "", ""},
		{"one word 150 times", "hrob", strings.Repeat("grave ", 150), "", TooLong},
		{"20 times longer", "Praha", strings.Repeat("Prague city ", 9), "", TooLong},
		{"too short", long, "Rescue.", "", TooShort},
		{"word repeated within the ratio", long, "The rescue excavation uncovered graves graves graves graves graves graves.", "", Repetition},
		{"phrase repeated", long, "two graves and a pit, two graves and a pit, two graves and a pit, two graves and a pit", "", Repetition},
		{"dominant word", strings.Repeat("jáma hrob sonda kůl ", 5), "pit pit grave pit pit trench pit pit post pit pit grave pit pit trench pit pit", "", Repetition},
		{"repetition in the source too", "hrob, hrob, hrob, hrob", "grave, grave, grave, grave", "", ""},
		{"copy", long, long, "", Copy},
		{"OCR noise copied", "O C CD 9 5 CD C", "O C CD 9 5 CD C", "", ""},
		{"labels in capitals copied", "DUM DUM PLOT PLOT FIX5 S2OSA", "DUM DUM PLOT PLOT FIX5 S2OSA", "", ""},
		{"copy, same language", long, long, "cs", ""},
		{"upper-cased is not a copy", long, strings.ToUpper(long), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tgt := tt.src2
			if tgt == "" {
				tgt = "en"
			}
			r := Default.Check(tt.src, tt.out, "cs", tgt)
			switch {
			case tt.want == "" && r != nil:
				t.Fatalf("rejected: %v", r)
			case tt.want != "" && r == nil:
				t.Fatalf("accepted, want %s", tt.want)
			case r != nil && r.Reason != tt.want:
				t.Fatalf("reason %s (%v), want %s", r.Reason, r, tt.want)
			}
			if r != nil && !errors.Is(r, ErrRejected) {
				t.Fatal("rejection does not wrap ErrRejected")
			}
		})
	}
}

func TestCheckLines(t *testing.T) {
	src := "hrob a jáma\nsonda 4\nvýzkum"
	if r := Default.CheckLines(src, "grave and pit\ntrench 4\nresearch\n", "cs", "en"); r != nil {
		t.Fatalf("clean batch rejected: %v", r)
	}
	r := Default.CheckLines(src, "grave and pit\n"+strings.Repeat("trench ", 150)+"\nresearch", "cs", "en")
	if r == nil || len(r.Lines) != 1 || r.Lines[0] != 1 {
		t.Fatalf("want line 2 rejected alone, got %+v", r)
	}
	// Lines merged: the whole reply is judged.
	if r := Default.CheckLines(src, "grave and pit trench 4 research", "cs", "en"); r != nil {
		t.Fatalf("merged but sane reply rejected: %v", r)
	}
}

func TestLongestRunLarge(t *testing.T) {
	// A runaway reply of 200,000 copies is judged in linear time.
	toks := strings.Fields(strings.Repeat("a b ", 100000))
	if n, g := longestRun(toks); n != 100000 || g != "a b" {
		t.Fatalf("run %d of %q", n, g)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	c, err := FromEnv("LLM", get)
	if err != nil || c != Default {
		t.Fatalf("%v %v", c, err)
	}
	env["LLM_GUARD_MAX_RATIO"] = "3"
	if c, err = FromEnv("LLM", get); err != nil || c.MaxRatio != 3 {
		t.Fatalf("%v %v", c, err)
	}
	for _, bad := range []string{"x", "-1", "0", "0.1"} {
		env["LLM_GUARD_MAX_RATIO"] = bad
		if _, err := FromEnv("LLM", get); err == nil || !strings.Contains(err.Error(), "LLM_GUARD") {
			t.Errorf("%q: want an error naming the variable, got %v", bad, err)
		}
	}
}

// scripted answers with a fixed sequence of replies.
type scripted struct {
	replies []string
	calls   int
}

func (s *scripted) Name() string                                   { return "scripted" }
func (s *scripted) Close() error                                   { return nil }
func (s *scripted) Supports(context.Context, string, string) error { return nil }
func (s *scripted) Translate(_ context.Context, text, src, tgt string) (string, error) {
	out := s.replies[s.calls]
	s.calls++
	if r := Default.Check(text, out, src, tgt); r != nil {
		return "", r
	}
	return out, nil
}

type retrier struct{ *scripted }

func (r retrier) Retry(ctx context.Context, text, src, tgt string) (string, error) {
	return r.scripted.Translate(ctx, text, src, tgt)
}

func TestTranslate(t *testing.T) {
	bad := strings.Repeat("grave ", 150)
	for _, tt := range []struct {
		name    string
		replies []string
		status  backend.Status
		text    string
		calls   int
	}{
		{"ok", []string{"grave"}, backend.OK, "grave", 1},
		{"retried", []string{bad, "grave"}, backend.Retried, "grave", 2},
		{"untranslated", []string{bad, bad}, backend.Untranslated, "", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &scripted{replies: tt.replies}
			seg, err := Translate(context.Background(), retrier{s}, "hrob", "cs", "en")
			if err != nil {
				t.Fatal(err)
			}
			if seg.Status != tt.status || seg.Text != tt.text || s.calls != tt.calls {
				t.Fatalf("got %+v after %d calls", seg, s.calls)
			}
		})
	}
}

type deterministic struct{ *scripted }

func (deterministic) Deterministic() bool { return true }

func TestTranslateDeterministic(t *testing.T) {
	s := &scripted{replies: []string{strings.Repeat("grave ", 150), "grave"}}
	seg, err := Translate(context.Background(), deterministic{s}, "hrob", "cs", "en")
	if err != nil || seg.Status != backend.Untranslated || seg.Calls != 1 || s.calls != 1 {
		t.Fatalf("got %+v, %v after %d calls; want untranslated without a retry", seg, err, s.calls)
	}
}

// TestTranslateContextEnded: a reply rejected after the context ended (a
// page stopped by another page's failure) is not retried, and the error is
// the context's, so the failure that ended it is the one reported. Before,
// the rejection itself was the page's error, and could be reported as the
// document's.
func TestTranslateContextEnded(t *testing.T) {
	s := &scripted{replies: []string{strings.Repeat("grave ", 150), "grave"}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Translate(ctx, retrier{s}, "hrob", "cs", "en")
	if !errors.Is(err, context.Canceled) || s.calls != 1 {
		t.Fatalf("%v after %d calls, want context.Canceled and no retry", err, s.calls)
	}
}
