package guard

import "testing"

// TestRoundsFromEnv: TRANSLATE_RETRY_ROUNDS unset is DefaultRounds, 0 turns
// the end rounds off, and a value that is not a whole number from 0 to
// MaxRounds is an error naming the variable.
func TestRoundsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		val    string
		want   int
		wantOK bool
	}{
		{"", DefaultRounds, true},
		{"0", 0, true},
		{" 2 ", 2, true},
		{"10", 10, true},
		{"11", 0, false},
		{"-1", 0, false},
		{"two", 0, false},
	} {
		got, err := RoundsFromEnv(func(k string) string {
			if k == RoundsEnv {
				return tc.val
			}
			return ""
		})
		if (err == nil) != tc.wantOK || got != tc.want {
			t.Errorf("%q: got %d, %v; want %d, ok %v", tc.val, got, err, tc.want, tc.wantOK)
		}
	}
}
