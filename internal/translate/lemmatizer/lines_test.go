package lemmatizer

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/transport"
)

const czech = "czech-pdt-ud-2.15-241121"

func standIn(t *testing.T, cfg lemmatizertest.Config) (*lemmatizertest.Server, *Client) {
	t.Helper()
	if cfg.Models == nil {
		cfg.Lexicon, cfg.Models = lemmatizertest.CzechLexicon, []string{czech}
	}
	srv := lemmatizertest.Start(cfg)
	t.Cleanup(srv.Close)
	return srv, New(srv.URL, transport.New(transport.Policy{MaxRetries: 2, BackoffBase: time.Millisecond}, nil))
}

// each lemmatises every line on its own: what LemmatizeLines must give.
func each(t *testing.T, c *Client, lines []string) [][]Token {
	t.Helper()
	out := make([][]Token, len(lines))
	for i, l := range lines {
		toks, err := c.Lemmatize(context.Background(), l, "cs")
		if err != nil {
			t.Fatal(err)
		}
		out[i] = toks
	}
	return out
}

// TestLemmatizeLines: many lines (several sentences in one, a blank one,
// a repeated one) go out in one request, and each line gets the tokens it
// gets alone, located in it.
func TestLemmatizeLines(t *testing.T) {
	srv, c := standIn(t, lemmatizertest.Config{})
	lines := []string{"V jámě byly nalezeny hroby. Hrob u cesty!", "", "   ", "Hroby v jámě", "(hrob)", "Hroby v jámě", "kosti"}
	got, err := c.LemmatizeLines(context.Background(), lines, "cs")
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	want := each(t, c, lines)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("by line:\n%+v\nalone:\n%+v", got, want)
	}
	for i, toks := range got {
		for _, tk := range toks {
			if tk.Start < 0 || lines[i][tk.Start:tk.End] != tk.Form {
				t.Errorf("line %d: %q located at [%d,%d)", i, tk.Form, tk.Start, tk.End)
			}
		}
	}
	if len(got[0]) != 10 || got[1] != nil || got[2] != nil || len(got[6]) != 1 {
		t.Errorf("token counts %d %d %d %d", len(got[0]), len(got[1]), len(got[2]), len(got[6]))
	}
	if _, err := c.LemmatizeLines(context.Background(), lines, "hu"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("hu: %v", err)
	}
}

// TestLemmatizeLinesRequests: lines share requests up to ChunkLimit
// characters, a longer line or one holding a line break goes alone, and
// no more than MaxInFlight requests are in flight at once.
func TestLemmatizeLinesRequests(t *testing.T) {
	srv, c := standIn(t, lemmatizertest.Config{Delay: 20 * time.Millisecond})
	c.ChunkLimit, c.MaxInFlight = 30, 2
	lines := []string{
		"Hrob v jámě.", "Hroby byly nalezeny.", // 12 + 2 + 20 = 34 > 30: apart
		"V hrobu ležel meč a u něj nádoba.", // 33 > 30: alone, cut by Lemmatize (two requests)
		"Hrob\nJáma",                        // a line break: alone
		"hrob", "jáma", "kosti", "meč", "hroby", "nádoba",
	} // requests: [0], [1 4], [2] twice, [3], [5 6 7 8], [9]
	got, err := c.LemmatizeLines(context.Background(), lines, "cs")
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests.Load(); n != 7 {
		t.Errorf("%d requests, want 7", n)
	}
	if m := srv.MaxInFlight.Load(); m > 2 {
		t.Errorf("%d requests in flight at once, want at most 2", m)
	}
	srv.Requests.Store(0)
	if want := each(t, c, lines); !reflect.DeepEqual(got, want) {
		t.Errorf("by line:\n%+v\nalone:\n%+v", got, want)
	}
}

// TestLemmatizeLinesRetries: a rate-limited request is retried under the
// transport policy, waiting at least its Retry-After.
func TestLemmatizeLinesRetries(t *testing.T) {
	srv, c := standIn(t, lemmatizertest.Config{Fail: []int{429}, RetryAfter: "0.2"})
	t0 := time.Now()
	got, err := c.LemmatizeLines(context.Background(), []string{"hrob", "jáma"}, "cs")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Requests.Load() != 2 || time.Since(t0) < 200*time.Millisecond {
		t.Errorf("%d requests in %v, want 2 at least 200 ms apart", srv.Requests.Load(), time.Since(t0))
	}
	if len(got) != 2 || len(got[1]) != 1 || got[1][0].Lemma != "jáma" {
		t.Errorf("tokens %+v", got)
	}
	_, failing := standIn(t, lemmatizertest.Config{Lexicon: nil, Models: []string{czech}, FailAlways: 503})
	if _, err := failing.LemmatizeLines(context.Background(), []string{"hrob"}, "cs"); !transport.IsTransportError(err) {
		t.Errorf("failing lemmatiser: %v", err)
	}
}

// TestByLine: a sentence whose first form the tokeniser normalised stays
// on its line; one whose line is used up goes to the next line holding
// its first form.
func TestByLine(t *testing.T) {
	lines := []string{"„Hrob“ v jámě", "hroby"}
	sents := [][]Token{
		{{Form: `"`}, {Form: "Hrob"}, {Form: `"`}, {Form: "v"}, {Form: "jámě"}},
		{{Form: "hroby"}},
	}
	got := byLine(lines, sents)
	if len(got[0]) != 5 || len(got[1]) != 1 {
		t.Fatalf("tokens per line %d %d", len(got[0]), len(got[1]))
	}
	if got[0][0].Start != -1 || got[0][1].Start != len("„") || got[1][0].Start != 0 {
		t.Errorf("offsets %+v", got)
	}
	// One sentence over two lines: each token goes to the line holding it.
	got = byLine([]string{"Hroby v", "jámě", "kosti"}, [][]Token{{{Form: "Hroby"}, {Form: "v"}, {Form: "jámě"}}, {{Form: "kosti"}}})
	if len(got[0]) != 2 || len(got[1]) != 1 || got[1][0].Start != 0 || len(got[2]) != 1 {
		t.Errorf("a sentence over two lines: %+v", got)
	}
}

// TestCache: each distinct line is lemmatised once per language, what is
// known costs no request, Lemmatize gives the tokens the client gives for
// the same text, and a failure is not kept.
func TestCache(t *testing.T) {
	srv, c := standIn(t, lemmatizertest.Config{})
	cache := NewCache(c)
	ctx := context.Background()
	if err := cache.Prefetch(ctx, []string{"Hroby v jámě", "hrob", "Hroby v jámě", ""}, "cs"); err != nil {
		t.Fatal(err)
	}
	if srv.Requests.Load() != 1 || cache.Len() != 2 {
		t.Fatalf("%d requests, %d lines kept; want 1, 2", srv.Requests.Load(), cache.Len())
	}
	text := "Hroby v jámě\nhrob\n\nHroby v jámě"
	got, err := cache.Lemmatize(ctx, text, "cs")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Requests.Load() != 1 {
		t.Errorf("%d requests, want the cached lines answered from memory", srv.Requests.Load())
	}
	want, err := c.Lemmatize(ctx, text, "cs")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cache:\n%+v\nclient:\n%+v", got, want)
	}
	got[0].Lemma = "changed by the caller"
	if again, _ := cache.Lemmatize(ctx, "Hroby v jámě", "cs"); again[0].Lemma != "hrob" {
		t.Errorf("the cache handed out its own tokens: %+v", again[0])
	}

	before := srv.Requests.Load()
	if _, err := cache.Lemmatize(ctx, "hrob", "hu"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("hu: %v", err)
	}
	small := &Cache{Inner: c, MaxLines: 2}
	for _, l := range []string{"hrob", "jáma", "kosti"} {
		if _, err := small.Lemmatize(ctx, l, "cs"); err != nil {
			t.Fatal(err)
		}
	}
	if small.Len() != 1 {
		t.Errorf("a full cache keeps %d lines, want 1 (it starts afresh)", small.Len())
	}
	if n := srv.Requests.Load() - before; n != 3 {
		t.Errorf("%d requests, want 3 (none for a language without a model)", n)
	}

	_, failing := standIn(t, lemmatizertest.Config{Models: []string{czech}, FailAlways: 503})
	fc := NewCache(failing)
	if _, err := fc.Lemmatize(ctx, "hrob", "cs"); err == nil || fc.Len() != 0 {
		t.Errorf("failure: err %v, %d lines kept", err, fc.Len())
	}
}
