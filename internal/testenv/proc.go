package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RSSKiB returns the resident set size of this process in KiB (VmRSS of
// /proc/self/status). It is an error where /proc is not available.
func RSSKiB() (int64, error) { return statusKiB("VmRSS:") }

// statusKiB reads one "Name:   N kB" line of /proc/self/status.
func statusKiB(name string) (int64, error) { return pidStatusKiB("self", name) }

// pidStatusKiB reads one "Name:   N kB" line of /proc/<pid>/status.
func pidStatusKiB(pid, name string) (int64, error) {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), name); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				break
			}
			return strconv.ParseInt(fields[0], 10, 64)
		}
	}
	return 0, errors.New("testenv: no " + strings.TrimSuffix(name, ":") + " line in /proc/" + pid + "/status")
}

// PeakRSSKiB returns the peak resident set size of this process in KiB
// (VmHWM of /proc/self/status) since it started or since the last
// ResetPeak.
func PeakRSSKiB() (int64, error) { return statusKiB("VmHWM:") }

// ResetPeak resets the peak resident set size to the current one (Linux:
// writes 5 to /proc/self/clear_refs), so that PeakRSSKiB measures what
// follows.
func ResetPeak() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// LoadAvg returns the one-minute load average of the machine (first field
// of /proc/loadavg), 0 where it cannot be read: benchmarks report it with
// every timing figure, since ratios measured on a loaded machine shift.
func LoadAvg() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	if _, err := fmt.Sscan(string(data), &l); err != nil {
		return 0
	}
	return l
}

// CPUTime returns the CPU time (user + system) of the whole process so far,
// 0 where it cannot be read. Benchmarks on a machine shared with other
// processes compare CPU times, which that load barely moves, where wall
// times swing with it.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ChildrenRSSKiB is the resident set size, in KiB, of this process's child
// processes together (the decoder processes of imageio.Isolation): what a
// memory figure of this process alone leaves out. Pages a child shares
// with others (the program's libraries) count in each.
func ChildrenRSSKiB() (int64, error) {
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		for _, pid := range strings.Fields(string(b)) {
			kb, err := pidStatusKiB(pid, "VmRSS:")
			if err == nil {
				sum += kb
			}
		}
	}
	return sum, nil
}
