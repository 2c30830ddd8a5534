//go:build linux

package testenv

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Terminal returns the far end of a new pseudo-terminal, for a program
// under test to write to as it would to a user's terminal (an *os.File
// that term.IsTerminal accepts), and a function that closes it and returns
// all that was written, as the terminal received it (newlines as "\r\n").
func Terminal(t testing.TB) (tty *os.File, written func() string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		t.Fatalf("numbering the pseudo-terminal: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Fatalf("opening the pseudo-terminal: %v", err)
	}
	// The terminal's buffer is small: it is read as it is written, or the
	// writer would block.
	var buf bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(&buf, master) // ends with EIO once the far end is closed
	}()
	var once sync.Once
	written = func() string {
		once.Do(func() {
			tty.Close()
			wg.Wait()
			master.Close()
		})
		return buf.String()
	}
	t.Cleanup(func() { written() })
	return tty, written
}
