package alto

import (
	"context"
	"reflect"
	"sync"
	"testing"
)

// preparing is a fake that records what the pipeline announces
// (backend.Preparer) and how many calls were made before.
type preparing struct {
	*fake
	mu       sync.Mutex
	prepared [][]string // "lang:tgt", then the segments
	before   []int      // calls made before each announcement
}

func (p *preparing) Prepare(ctx context.Context, segments []string, src, tgt string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prepared = append(p.prepared, append([]string{src + ":" + tgt}, segments...))
	p.before = append(p.before, p.nCalls())
}

// TestPrepare: a page's blocks and, for pass 2, their lines are announced
// once, before the page's first translation call; with FastAlign only the
// blocks.
func TestPrepare(t *testing.T) {
	for _, c := range []struct {
		fast bool
		want []string
	}{
		{false, []string{"cs:en", "Dobrý den 'x' světe", "jedna dva", "Dobrý den 'x'", "světe", "jedna dva"}},
		{true, []string{"cs:en", "Dobrý den 'x' světe", "jedna dva"}},
	} {
		p := &preparing{fake: upper()}
		if _, err := Translate(context.Background(), []byte(small), Options{Backend: p, Source: "cs", Target: "en", FastAlign: c.fast}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.prepared, [][]string{c.want}) || p.before[0] != 0 {
			t.Errorf("fast=%v: prepared %q after %v calls, want %q before any", c.fast, p.prepared, p.before, c.want)
		}
	}
}
