package torch

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestArenaLimit: threads that allocate share at most ArenaMax arenas, and a
// limit from the environment is left to glibc. The counting runs in child
// processes, each with a fresh allocator.
func TestArenaLimit(t *testing.T) {
	if os.Getenv("ARCHIVEKIT_ARENA_CHILD") == "1" {
		// 16 OS threads allocate, and stay alive until the arenas are
		// counted (an exiting thread hands its arena on to the next).
		var allocated sync.WaitGroup
		counted := make(chan struct{})
		for range 16 {
			allocated.Add(1)
			go func() {
				runtime.LockOSThread()
				mallocOnThisThread()
				allocated.Done()
				<-counted
			}()
		}
		allocated.Wait()
		os.Stdout.WriteString("arenas=" + strconv.Itoa(mallocArenas()) + " max=" + strconv.Itoa(ArenaMax()) + "\n")
		close(counted)
		os.Exit(0)
	}
	child := func(env ...string) (arenas, max int) {
		t.Helper()
		var a, m int
		for _, f := range strings.Fields(childLine(t, "arenas=", append(env, "ARCHIVEKIT_ARENA_CHILD=1"), "-test.run", "^TestArenaLimit$")) {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.Atoi(v)
			switch k {
			case "arenas":
				a = n
			case "max":
				m = n
			}
		}
		return a, m
	}
	arenas, max := child()
	if max < 2 {
		t.Fatalf("ArenaMax = %d, want the CPU count (at least 2)", max)
	}
	if arenas < 1 || arenas > max {
		t.Errorf("16 allocating threads made %d arenas, want at most ArenaMax = %d", arenas, max)
	}
	// MALLOC_ARENA_MAX is the user's: the program does not override it.
	arenas, max = child("MALLOC_ARENA_MAX=" + strconv.Itoa(16+8))
	if max != 0 {
		t.Errorf("with MALLOC_ARENA_MAX set, ArenaMax = %d, want 0 (left to the environment)", max)
	}
	if runtime.NumCPU() < 8 && arenas <= 8 {
		t.Errorf("with MALLOC_ARENA_MAX=24, 16 allocating threads made only %d arenas: the environment's limit was not used", arenas)
	}
}

// TestKeepsFreedMemory: the process's malloc serves blocks of 1 to 16 MiB
// from its heaps (which keep them for the next forward pass) instead of
// mapping each from the system, as glibc's defaults do in a fresh process
// (128 KiB and up mapped); ARCHIVEKIT_MALLOC_DEFAULTS and a threshold from
// the environment leave glibc's settings alone. Each case runs in a child
// process with a fresh allocator, the allocations on a thread other than
// the main one, as forward passes run.
func TestKeepsFreedMemory(t *testing.T) {
	if os.Getenv("ARCHIVEKIT_KEEP_CHILD") == "1" {
		done := make(chan string)
		go func() {
			runtime.LockOSThread()
			s := fmt.Sprintf("keeps=%t", KeepsFreedMemory())
			for _, n := range []int{1 << 20, 16 << 20} {
				s += fmt.Sprintf(" maps%d=%t", n>>20, mallocMaps(n))
			}
			done <- s
		}()
		os.Stdout.WriteString(<-done + "\n")
		os.Exit(0)
	}
	child := func(env ...string) string {
		t.Helper()
		return childLine(t, "keeps=", append(env, "ARCHIVEKIT_KEEP_CHILD=1"), "-test.run", "^TestKeepsFreedMemory$")
	}
	// Only the environment may turn the settings off (the constructor's
	// rule); a child without them otherwise is a failure, not a skip.
	tun := os.Getenv("GLIBC_TUNABLES")
	for _, v := range []string{"ARCHIVEKIT_MALLOC_DEFAULTS", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"} {
		if _, set := os.LookupEnv(v); set || strings.Contains(tun, "mmap_threshold") || strings.Contains(tun, "trim_threshold") || strings.Contains(tun, "top_pad") {
			t.Skip("the environment sets glibc malloc's thresholds (" + v + " or GLIBC_TUNABLES); the program leaves them to it")
		}
	}
	if got, want := child(), "keeps=true maps1=false maps16=false"; got != want {
		t.Errorf("program's settings: %s, want %s", got, want)
	}
	for _, env := range []string{"ARCHIVEKIT_MALLOC_DEFAULTS=1", "MALLOC_MMAP_THRESHOLD_=131072", "GLIBC_TUNABLES=glibc.malloc.top_pad=131072"} {
		if got, want := child(env), "keeps=false maps1=true maps16=true"; got != want {
			t.Errorf("with %s: %s, want %s (glibc's settings)", env, got, want)
		}
	}
}

// childLine runs this test binary again with args and env added to this
// process's environment (a child process with a fresh allocator) and
// returns the line of its output that starts with prefix.
func childLine(tb testing.TB, prefix string, env []string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("child: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(l)
		}
	}
	tb.Fatalf("child printed no line starting %q: %q", prefix, out)
	return ""
}
