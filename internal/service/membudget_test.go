package service

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"archivekit/internal/testenv"
)

// TestMemoryBudget: requests are admitted while their estimates fit; one
// that does not fit waits and is admitted when memory comes free, or gets
// ErrOverBudget after the wait; one above the whole budget runs alone.
func TestMemoryBudget(t *testing.T) {
	b := NewMemoryBudget(100, 200*time.Millisecond, "test")
	ctx := context.Background()
	r1, err := b.Acquire(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, 60); !errors.Is(err, ErrOverBudget) || !strings.Contains(err.Error(), "MEMORY_WAIT_S") {
		t.Errorf("over the budget: %v", err)
	}
	r1()
	r1() // a second release gives nothing back twice
	if b.InUse() != 0 {
		t.Errorf("in use %d after every release", b.InUse())
	}

	// A request that does not fit waits (Waiting counts it) and is
	// admitted once memory comes free; the wait is long, so only the
	// release admits it.
	long := NewMemoryBudget(100, time.Hour, "test")
	r2, err := long.Acquire(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := long.Acquire(ctx, 60)
		if err == nil {
			r()
		}
		got <- err
	}()
	if !testenv.WaitFor(time.Minute, func() bool { return long.Waiting() == 1 }) {
		t.Fatal("the second request is not waiting for memory")
	}
	select {
	case err := <-got:
		t.Fatalf("a request admitted while the budget was held: %v", err)
	default:
	}
	r2()
	if err := <-got; err != nil {
		t.Errorf("waiting request not admitted once memory came free: %v", err)
	}
	if long.Waiting() != 0 || long.InUse() != 0 {
		t.Errorf("after the waiting request ended: %d waiting, %d in use", long.Waiting(), long.InUse())
	}
	huge, err := b.Acquire(ctx, 1000)
	if err != nil || b.InUse() != 100 {
		t.Errorf("a request above the budget: %v, in use %d (want it alone with the whole budget)", err, b.InUse())
	}
	huge()
	var none *MemoryBudget
	if r, err := none.Acquire(ctx, 1<<40); err != nil {
		t.Errorf("no budget: %v", err)
	} else {
		r()
	}
}

// TestLoadMemoryBudget: MEMORY_BUDGET_MB wins; bad values name the variable.
func TestLoadMemoryBudget(t *testing.T) {
	b, _, err := LoadMemoryBudget(env{"MEMORY_BUDGET_MB": "512", "MEMORY_WAIT_S": "2", "GOMEMLIMIT": "off"}.lookup, 0)
	if err != nil || b.Total != 512<<20 || b.Wait != 2*time.Second {
		t.Errorf("%+v %v", b, err)
	}
	for _, e := range []env{{"MEMORY_BUDGET_MB": "0"}, {"MEMORY_BUDGET_MB": "lots"}, {"MEMORY_WAIT_S": "-1"}} {
		if _, _, err := LoadMemoryBudget(e.lookup, 0); err == nil || !strings.Contains(err.Error(), "MEMORY_") {
			t.Errorf("%v: %v", e, err)
		}
	}
}
