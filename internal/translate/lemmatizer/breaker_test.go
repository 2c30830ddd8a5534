package lemmatizer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

type flaky struct {
	calls atomic.Int64
	fail  atomic.Bool
}

func (f *flaky) Lemmatize(ctx context.Context, text, lang string) ([]Token, error) {
	f.calls.Add(1)
	if lang == "xx" {
		return nil, ErrUnsupported
	}
	if f.fail.Load() {
		return nil, errors.New("connection refused")
	}
	return []Token{{Form: text, Lemma: text}}, nil
}

func TestBreakerStopsCallingAfterRepeatedFailure(t *testing.T) {
	f := &flaky{}
	f.fail.Store(true)
	opened := 0
	b := &Breaker{Inner: f, OnOpen: func(error) { opened++ }}
	ctx := context.Background()
	for i := 0; i < 130; i++ {
		if _, err := b.Lemmatize(ctx, "slovo", "cs"); err == nil {
			t.Fatal("no error from a failing lemmatiser")
		}
	}
	if f.calls.Load() != DefaultTrip || opened != 1 {
		t.Fatalf("%d calls reached the lemmatiser and the circuit opened %d times; want %d and 1", f.calls.Load(), opened, DefaultTrip)
	}
	if _, err := b.Lemmatize(ctx, "slovo", "cs"); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("open circuit answered %v", err)
	}
	// Without a cool-down it stays open even when the service is back.
	f.fail.Store(false)
	if _, err := b.Lemmatize(ctx, "slovo", "cs"); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("circuit closed by itself: %v", err)
	}
}

func TestBreakerCooldownAndNonFailures(t *testing.T) {
	f := &flaky{}
	now := time.Unix(0, 0)
	b := &Breaker{Inner: f, Trip: 1, Cooldown: time.Minute, now: func() time.Time { return now }}
	ctx := context.Background()
	// Unsupported languages do not count.
	for i := 0; i < 3; i++ {
		if _, err := b.Lemmatize(ctx, "x", "xx"); !errors.Is(err, ErrUnsupported) {
			t.Fatal(err)
		}
	}
	if open, _ := b.Open(); open {
		t.Fatal("unsupported languages opened the circuit")
	}
	f.fail.Store(true)
	b.Lemmatize(ctx, "a", "cs")
	if open, _ := b.Open(); !open {
		t.Fatal("not open after Trip failures")
	}
	calls := f.calls.Load()
	b.Lemmatize(ctx, "a", "cs")
	if f.calls.Load() != calls {
		t.Fatal("called while open")
	}
	now = now.Add(2 * time.Minute)
	f.fail.Store(false)
	if toks, err := b.Lemmatize(ctx, "a", "cs"); err != nil || len(toks) != 1 {
		t.Fatalf("trial call after the cool-down: %v", err)
	}
	if open, _ := b.Open(); open {
		t.Fatal("a successful trial did not close the circuit")
	}
}

// TestBreakerLines: a LemmatizeLines call is one call of the circuit,
// passed whole to an inner LineLemmatizer, line by line to another one.
func TestBreakerLines(t *testing.T) {
	f := &flaky{}
	b := &Breaker{Inner: f}
	ctx := context.Background()
	got, err := b.LemmatizeLines(ctx, []string{"hrob", "jáma"}, "cs")
	if err != nil || len(got) != 2 || got[1][0].Lemma != "jáma" || f.calls.Load() != 2 {
		t.Fatalf("line by line: %+v %v, %d calls", got, err, f.calls.Load())
	}
	f.fail.Store(true)
	for i := 0; i < 3; i++ {
		if _, err := b.LemmatizeLines(ctx, []string{"hrob", "jáma"}, "cs"); err == nil {
			t.Fatal("no error from a failing lemmatiser")
		}
	}
	if open, _ := b.Open(); !open || f.calls.Load() != 2+DefaultTrip {
		t.Errorf("open %v after %d calls, want open after %d", open, f.calls.Load(), 2+DefaultTrip)
	}
	if _, err := b.Lemmatize(ctx, "hrob", "cs"); !errors.Is(err, ErrCircuitOpen) {
		t.Errorf("open circuit: %v", err)
	}
}
