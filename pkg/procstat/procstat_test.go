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
