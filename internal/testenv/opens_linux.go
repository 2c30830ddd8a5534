//go:build linux

package testenv

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Opens runs f and returns how many times each of files was opened
// meanwhile; a file never opened is absent (0).
func Opens(t testing.TB, files []string, f func()) map[string]int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	watched := map[int32]string{}
	for _, p := range files {
		// The closes are watched too, though not counted: the kernel merges
		// an event into an identical one still unread at the end of the
		// queue, so two opens of a file with nothing watched between them
		// would be counted as one.
		w, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN|unix.IN_CLOSE)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		watched[int32(w)] = p
	}
	f()
	n := map[string]int{}
	buf := make([]byte, 64<<10)
	for {
		k, err := unix.Read(fd, buf)
		if err == unix.EAGAIN {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		for at := 0; at+unix.SizeofInotifyEvent <= k; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[at]))
			if ev.Mask&unix.IN_OPEN != 0 {
				n[watched[ev.Wd]]++
			}
			at += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
