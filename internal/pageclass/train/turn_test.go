package train

import (
	"slices"
	"testing"
)

// turnSquare turns clockwise: the top-left pixel goes to the top right; four
// quarters give the page back.
func TestTurnSquare(t *testing.T) {
	const s = 3
	pix := make([]uint8, 3*s*s)
	for i := range pix {
		pix[i] = uint8(i)
	}
	one := turnSquare(pix, s, 1)
	// channel 0: rows 0 1 2 / 3 4 5 / 6 7 8 turned clockwise: 6 3 0 / 7 4 1 / 8 5 2
	if got := one[:s*s]; !slices.Equal(got, []uint8{6, 3, 0, 7, 4, 1, 8, 5, 2}) {
		t.Errorf("a quarter turn: %v", got)
	}
	if got := turnSquare(turnSquare(pix, s, 2), s, 2); !slices.Equal(got, pix) {
		t.Errorf("two half turns: %v", got)
	}
	if got := turnSquare(one, s, 3); !slices.Equal(got, pix) {
		t.Errorf("a quarter and three quarters: %v", got)
	}
}
