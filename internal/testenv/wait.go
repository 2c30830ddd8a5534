package testenv

import "time"

// WaitFor polls cond every 10 ms until it holds or limit passes; it
// reports whether it held.
func WaitFor(limit time.Duration, cond func() bool) bool {
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
