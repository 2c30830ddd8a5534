package testenv

import (
	"testing"
	"time"
)

func TestRSSGrowsWithTouchedMemory(t *testing.T) {
	before, err := RSSKiB()
	if err != nil {
		t.Skip(err)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after, _ := RSSKiB()
	if after-before < 32<<10 {
		t.Errorf("RSS %d -> %d KiB after touching 64 MiB", before, after)
	}
	_ = buf[len(buf)-1]
}

func TestPeakFollowsResets(t *testing.T) {
	if err := ResetPeak(); err != nil {
		t.Skip(err)
	}
	base, err := PeakRSSKiB()
	if err != nil {
		t.Skip(err)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	peak, _ := PeakRSSKiB()
	if peak-base < 32<<10 {
		t.Errorf("peak %d -> %d KiB after touching 64 MiB", base, peak)
	}
	_ = buf[len(buf)-1]
}

// TestCPUTimeGrowsWithWork: busy work shows in CPUTime (given up to a
// minute of wall time on a loaded machine).
func TestCPUTimeGrowsWithWork(t *testing.T) {
	before := CPUTime()
	if before <= 0 {
		t.Fatalf("CPUTime = %v at start, want > 0", before)
	}
	x := 1.0
	for deadline := time.Now().Add(time.Minute); CPUTime()-before < 20*time.Millisecond && time.Now().Before(deadline); {
		for i := 0; i < 1e5; i++ {
			x = x*1.0000001 + 1e-9
		}
	}
	if got := CPUTime() - before; got < 20*time.Millisecond || x == 0 {
		t.Fatalf("CPUTime grew by %v during busy work", got)
	}
}
