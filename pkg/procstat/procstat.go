// Package procstat reads facts about the running process from /proc, for the
// memory checks of tests and benchmarks.
package procstat

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
)

// RSSKiB returns the resident set size of this process in KiB (VmRSS of
// /proc/self/status). It is an error where /proc is not available.
func RSSKiB() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				break
			}
			return strconv.ParseInt(fields[0], 10, 64)
		}
	}
	return 0, errors.New("procstat: no VmRSS line in /proc/self/status")
}
