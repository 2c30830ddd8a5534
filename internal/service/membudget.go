package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Environment variables of the memory budget (LoadMemoryBudget).
const (
	// EnvMemoryBudget is the memory, in MiB, the requests of one process
	// may hold at once by their estimates; unset, three quarters of the
	// container's memory limit less what the process holds at start.
	EnvMemoryBudget = "MEMORY_BUDGET_MB"
	// EnvMemoryWait is the longest a request waits for memory, in
	// seconds, before it is answered 503 with Retry-After.
	EnvMemoryWait = "MEMORY_WAIT_S"
)

// DefaultMemoryWait is the wait for memory when MEMORY_WAIT_S is unset.
const DefaultMemoryWait = 30 * time.Second

// ErrOverBudget is returned by MemoryBudget.Acquire when the memory did
// not become free within the wait; answer it with WriteOverBudget.
var ErrOverBudget = errors.New("not enough memory free for this request")

// MemoryBudget admits requests by their estimated memory against a
// process budget, so that the requests in flight together stay under the
// container's limit instead of the process being killed for memory. A
// request estimated above the whole budget is admitted alone (it takes
// the whole budget). The zero value, and a nil *MemoryBudget, admit
// everything.
type MemoryBudget struct {
	// Total is the budget in bytes; 0 means none.
	Total int64
	// Wait is the longest Acquire waits.
	Wait time.Duration
	// Source says where Total came from, for logs and /info.
	Source  string
	sem     *semaphore.Weighted
	used    atomic.Int64
	waiting atomic.Int64
}

// NewMemoryBudget returns a budget of total bytes (0: no budget) with the
// given wait.
func NewMemoryBudget(total int64, wait time.Duration, source string) *MemoryBudget {
	b := &MemoryBudget{Total: total, Wait: wait, Source: source}
	if total > 0 {
		b.sem = semaphore.NewWeighted(total)
	}
	return b
}

// Acquire takes n bytes of the budget (at most the whole of it), waiting
// up to Wait (or until ctx ends) for them to be free. The returned
// function gives them back; it is safe to call more than once.
func (b *MemoryBudget) Acquire(ctx context.Context, n int64) (func(), error) {
	if b == nil || b.sem == nil {
		return func() {}, nil
	}
	n = min(max(n, 1), b.Total)
	if !b.sem.TryAcquire(n) {
		if err := b.wait(ctx, n); err != nil {
			return nil, err
		}
	}
	b.used.Add(n)
	var once sync.Once
	return func() {
		once.Do(func() {
			b.used.Add(-n)
			b.sem.Release(n)
		})
	}, nil
}

// wait takes n bytes once they come free, counted in Waiting meanwhile.
func (b *MemoryBudget) wait(ctx context.Context, n int64) error {
	b.waiting.Add(1)
	defer b.waiting.Add(-1)
	wctx, cancel := context.WithTimeout(ctx, b.Wait)
	defer cancel()
	if err := b.sem.Acquire(wctx, n); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: it needs about %s, %s of the %s budget (%s) are held by other requests and none came free within %g s (%s)",
			ErrOverBudget, formatMiB(n), formatMiB(b.InUse()), formatMiB(b.Total), b.Source, b.Wait.Seconds(), EnvMemoryWait)
	}
	return nil
}

// Waiting is the number of requests waiting for memory now.
func (b *MemoryBudget) Waiting() int {
	if b == nil {
		return 0
	}
	return int(b.waiting.Load())
}

// InUse is the part of the budget held now, in bytes.
func (b *MemoryBudget) InUse() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// WriteOverBudget answers a request that found no memory: 503 with
// Retry-After and the detail of err.
func WriteOverBudget(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", "5")
	WriteError(w, http.StatusServiceUnavailable, ReasonOverloaded, "the service is busy: "+err.Error()+"; retry shortly")
}

func formatMiB(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// cgroupFiles are where the container's memory limit is read: cgroup v2,
// then v1.
var cgroupFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// ContainerMemoryLimit is the memory limit of the process's cgroup in
// bytes, and the file it was read from; 0 when there is none.
func ContainerMemoryLimit() (int64, string) {
	for _, f := range cgroupFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(data))
		if v == "max" {
			return 0, ""
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // v1 writes a huge number for "no limit"
			return 0, ""
		}
		return n, f
	}
	return 0, ""
}

// LoadMemoryBudget reads MEMORY_BUDGET_MB and MEMORY_WAIT_S. Unset, the
// budget is three quarters of the container's memory limit less held (the
// memory the process holds once warm), and no budget when there is no
// limit. When the container has a limit and GOMEMLIMIT is unset, the Go
// runtime's soft limit is set to 90 % of it, so that the collector works
// harder before the kernel would kill the process. notes says what was
// decided, for the start-up log.
func LoadMemoryBudget(lookup func(string) (string, bool), held int64) (b *MemoryBudget, notes []string, err error) {
	wait := DefaultMemoryWait
	if v, ok := lookup(EnvMemoryWait); ok {
		if wait, err = seconds(EnvMemoryWait, strings.TrimSpace(v), true, time.Hour, "is not a number of seconds (0 to 3600)"); err != nil {
			return nil, nil, err
		}
	}
	limit, file := ContainerMemoryLimit()
	if _, set := lookup("GOMEMLIMIT"); limit > 0 && !set {
		soft := limit / 10 * 9
		debug.SetMemoryLimit(soft)
		notes = append(notes, fmt.Sprintf("GOMEMLIMIT set to %s (90 %% of the container's limit of %s, %s)", formatMiB(soft), formatMiB(limit), file))
	}
	if v, ok := lookup(EnvMemoryBudget); ok {
		mb, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if perr != nil || !(mb > 0) || mb > 1<<30 || math.IsInf(mb, 0) {
			return nil, nil, fmt.Errorf("%s=%q is not a positive number of MiB", EnvMemoryBudget, v)
		}
		b = NewMemoryBudget(int64(mb*(1<<20)), wait, EnvMemoryBudget)
		return b, append(notes, fmt.Sprintf("memory budget for requests: %s (%s)", formatMiB(b.Total), EnvMemoryBudget)), nil
	}
	if limit == 0 {
		return NewMemoryBudget(0, wait, ""), append(notes, "no memory budget for requests: no container memory limit and "+EnvMemoryBudget+" unset"), nil
	}
	total := limit/4*3 - held
	if total < 1<<20 {
		total = 1 << 20
	}
	b = NewMemoryBudget(total, wait, fmt.Sprintf("3/4 of the container's limit less %s held at start", formatMiB(held)))
	return b, append(notes, fmt.Sprintf("memory budget for requests: %s (%s)", formatMiB(total), b.Source)), nil
}

// ProcessRSS is the resident memory of this process in bytes (VmRSS of
// /proc/self/status).
func ProcessRSS() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/self/status")
}
