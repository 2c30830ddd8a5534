package handles

import "testing"

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
