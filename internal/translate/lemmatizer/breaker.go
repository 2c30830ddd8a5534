package lemmatizer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrCircuitOpen is returned (wrapped) by a Breaker that has stopped calling
// the lemmatiser after repeated failures.
var ErrCircuitOpen = errors.New("lemmatiser not called: it failed repeatedly (circuit open)")

// DefaultTrip is how many consecutive failed calls open a Breaker.
const DefaultTrip = 2

// Lemmatizer is what a Breaker guards (a *Client).
type Lemmatizer interface {
	Lemmatize(ctx context.Context, text, lang string) ([]Token, error)
}

// Breaker is a circuit breaker in front of a lemmatiser: after Trip
// consecutive failed calls (each already retried by the client's
// transport) it stops calling it and fails at once with ErrCircuitOpen,
// so an unreachable lemmatiser costs a run two retried calls instead of
// retries before every text. With Cooldown zero it stays open for the
// Breaker's life (one batch run); otherwise one call is let through after
// each Cooldown (a long-running service recovers when the lemmatiser
// does). Cancellation and languages without a model do not count as
// failures. It is safe for concurrent use.
type Breaker struct {
	Inner Lemmatizer
	// Trip is the number of consecutive failures that open the circuit;
	// < 1 means DefaultTrip.
	Trip int
	// Cooldown: how long the circuit stays open before one trial call; 0
	// means for good.
	Cooldown time.Duration
	// OnOpen, when not nil, is called each time the circuit opens, with
	// the last error.
	OnOpen func(err error)

	mu       sync.Mutex
	failures int
	openedAt time.Time
	open     bool
	lastErr  error
	now      func() time.Time
}

// Open reports whether the circuit is open now, with the error that opened it.
func (b *Breaker) Open() (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open, b.lastErr
}

func (b *Breaker) clock() time.Time {
	if b.now != nil {
		return b.now()
	}
	return time.Now()
}

// Lemmatize calls the inner lemmatiser unless the circuit is open.
func (b *Breaker) Lemmatize(ctx context.Context, text, lang string) ([]Token, error) {
	var toks []Token
	err := b.call(ctx, func() (err error) {
		toks, err = b.Inner.Lemmatize(ctx, text, lang)
		return err
	})
	return toks, err
}

// LemmatizeLines lemmatises lines as one call (one success or failure of
// the circuit) unless the circuit is open: through the inner lemmatiser's
// LemmatizeLines when it has one (a LineLemmatizer), else line by line.
func (b *Breaker) LemmatizeLines(ctx context.Context, lines []string, lang string) ([][]Token, error) {
	var out [][]Token
	err := b.call(ctx, func() error {
		if ll, ok := b.Inner.(LineLemmatizer); ok {
			var err error
			out, err = ll.LemmatizeLines(ctx, lines, lang)
			return err
		}
		out = make([][]Token, len(lines))
		for i, l := range lines {
			toks, err := b.Inner.Lemmatize(ctx, l, lang)
			if err != nil {
				return err
			}
			out[i] = toks
		}
		return nil
	})
	return out, err
}

// call runs inner unless the circuit is open, and counts its outcome.
func (b *Breaker) call(ctx context.Context, inner func() error) error {
	b.mu.Lock()
	if b.open && (b.Cooldown <= 0 || b.clock().Sub(b.openedAt) < b.Cooldown) {
		last := b.lastErr
		b.mu.Unlock()
		return fmt.Errorf("%w; last error: %v", ErrCircuitOpen, last)
	}
	if b.open {
		b.openedAt = b.clock() // one trial call; others keep failing fast meanwhile
	}
	b.mu.Unlock()

	err := inner()
	if err != nil && (errors.Is(err, ErrUnsupported) || ctx.Err() != nil) {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		b.failures, b.open = 0, false
		return nil
	}
	b.failures++
	trip := b.Trip
	if trip < 1 {
		trip = DefaultTrip
	}
	if b.failures >= trip && !b.open {
		b.open, b.openedAt, b.lastErr = true, b.clock(), err
		if b.OnOpen != nil {
			b.OnOpen(err)
		}
	} else if b.open {
		b.openedAt, b.lastErr = b.clock(), err
	}
	return err
}
