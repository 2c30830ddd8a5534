package procstat

import "testing"

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
