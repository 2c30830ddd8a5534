package torch

import (
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
		cmd := exec.Command(os.Args[0], "-test.run", "^TestArenaLimit$")
		cmd.Env = append(os.Environ(), append(env, "ARCHIVEKIT_ARENA_CHILD=1")...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		s := string(out)
		i := strings.Index(s, "arenas=")
		if i < 0 {
			t.Fatalf("child printed %q", s)
		}
		var a, m int
		for _, f := range strings.Fields(s[i:]) {
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
