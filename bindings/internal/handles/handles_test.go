package handles

import (
	"runtime"
	"testing"
	"time"
)

type res struct {
	c      *Counter
	closed bool
}

func (r *res) Close() error {
	if !r.closed {
		r.closed = true
		r.c.Closed()
	}
	return nil
}

func TestLiveCountsUntilClose(t *testing.T) {
	var c Counter
	a, b := &res{c: &c}, &res{c: &c}
	Track(&c, a, (*res).Close)
	Track(&c, b, (*res).Close)
	if c.Live() != 2 {
		t.Fatalf("Live = %d, want 2", c.Live())
	}
	a.Close()
	a.Close()
	if c.Live() != 1 || c.Leaked() != 0 {
		t.Errorf("Live = %d, Leaked = %d after closing one twice; want 1, 0", c.Live(), c.Leaked())
	}
	b.Close()
	if c.Live() != 0 {
		t.Errorf("Live = %d, want 0", c.Live())
	}
}

// A handle dropped without Close is freed by the finalizer and counted as
// a leak, so the command tests' Leaked() == 0 check can fail.
func TestDroppedHandleCountsAsLeak(t *testing.T) {
	var c Counter
	freed := make(chan struct{})
	func() {
		r := &res{c: &c}
		Track(&c, r, func(r *res) error {
			err := r.Close()
			close(freed)
			return err
		})
	}()
	deadline := time.After(30 * time.Second)
	for {
		runtime.GC()
		select {
		case <-freed:
			if c.Leaked() != 1 || c.Live() != 0 {
				t.Errorf("Leaked = %d, Live = %d after the collector freed a dropped handle; want 1, 0", c.Leaked(), c.Live())
			}
			return
		case <-deadline:
			t.Fatal("the finalizer never ran")
		default:
			runtime.Gosched()
		}
	}
}
