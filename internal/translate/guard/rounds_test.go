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

// TestParseRounds: a number of rounds from a flag or configuration is
// read as the environment's is, and its error names the setting it came
// from with the value as given.
func TestParseRounds(t *testing.T) {
	if n, err := ParseRounds("--retry-rounds", " 3 "); err != nil || n != 3 {
		t.Errorf(`ParseRounds(" 3 ") = %d, %v; want 3`, n, err)
	}
	_, err := ParseRounds("config retry_rounds", "11")
	if err == nil || err.Error() != `config retry_rounds="11": want a whole number from 0 to 10` {
		t.Errorf("ParseRounds(11) error = %v", err)
	}
}
