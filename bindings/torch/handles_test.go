package torch

import (
	"testing"
	"time"
)

// LiveHandles counts every module and trainer until it is closed, once.
func TestLiveHandlesCountOpenObjects(t *testing.T) {
	base := LiveHandles()
	a := load(t, "avg_a.pt")
	b := load(t, "avg_b.pt")
	avg, err := Average(a, b)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(load(t, "tiny_cnn.pt"), DefaultAdamW(1e-3))
	if err != nil {
		t.Fatal(err)
	}
	if n := LiveHandles() - base; n != 5 {
		t.Errorf("%d live handles, want 5 (three modules, an average, a trainer)", n)
	}
	for i := 0; i < 2; i++ { // a second Close counts nothing
		tr.Close()
		avg.Close()
		a.Close()
	}
	if n := LiveHandles() - base; n != 2 {
		t.Errorf("%d live handles after closing three, want 2", n)
	}
	if _, err := avg.Forward(forwardInput(t)); err != ErrClosed {
		t.Errorf("forward on a closed module: %v, want ErrClosed", err)
	}
}

// Average(m, m) read-locks m once: with a writer queuing on m (SetTrain)
// between two read locks of the same goroutine, RWMutex would deadlock.
func TestAverageOfAModuleWithItselfUnderWriters(t *testing.T) {
	m := load(t, "avg_a.pt")
	in := forwardInput(t)
	want, err := m.Forward(in)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	writer := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				writer <- nil
				return
			default:
			}
			if err := m.SetTrain(false); err != nil {
				writer <- err
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 300; i++ {
			avg, err := Average(m, m)
			if err != nil {
				done <- err
				return
			}
			avg.Close()
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute): // a deadlock guard, not synchronisation
		t.Fatal("Average(m, m) did not finish while SetTrain ran: deadlock")
	}
	close(stop)
	if err := <-writer; err != nil {
		t.Fatal(err)
	}
	avg, err := Average(m, m)
	if err != nil {
		t.Fatal(err)
	}
	defer avg.Close()
	got, err := avg.Forward(in)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(t, got, flatten(want)); d > 1e-6 {
		t.Errorf("the average of a module with itself differs from it by %g", d)
	}
}
