// Package atomicfile writes files so that readers never see a partial file:
// data goes to a temporary file in the same directory, is synced, and is
// renamed over the destination.
package atomicfile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"archivekit/internal/fileowner"
)

// maxTempBase is the most bytes of the destination's name a temporary
// file's name repeats: with the dot, ".tmp-" and os.CreateTemp's number
// (at most 10 digits) it stays within the 255 bytes a name may have on
// Linux file systems, so a destination whose own name is legal, however
// long, can be written (a 240-byte name failed: its temporary name was
// 256 bytes).
const maxTempBase = 200

// tempPattern is the os.CreateTemp pattern of a temporary file for the
// destination named base: ".<base>.tmp-*", base cut to maxTempBase bytes
// at a character boundary.
func tempPattern(base string) string {
	if len(base) > maxTempBase {
		cut := maxTempBase
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return "." + base + ".tmp-*"
}

// Umask is the process's file mode creation mask, read once: the bits a
// file this package writes does not get, as a file os.OpenFile creates
// does not (the temporary file is made 0600 and then given its mode, which
// os.Chmod would set whole: under umask 077 results were 0644 for
// everyone to read).
var Umask = sync.OnceValue(func() os.FileMode {
	// Linux says it in /proc (since 4.7) without changing it; elsewhere it
	// is set and set back, the only way POSIX offers to read it.
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("Umask:")); ok {
				if m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32); err == nil {
					return os.FileMode(m) & os.ModePerm
				}
			}
		}
	}
	m := syscall.Umask(0o22)
	syscall.Umask(m)
	return os.FileMode(m) & os.ModePerm
})

// CheckDir reports whether this process can create files in dir, by
// creating one and removing it: the error of a folder that exists but
// another user owns, or a temporary folder that is gone, is its own (the
// first file a run or a service wrote failed later, named as that file).
func CheckDir(dir string) error {
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// NotOthersLink refuses path when it is a symbolic link that another user
// made (a link planted in a shared, world-writable folder under the name
// of a folder a run makes there: the run wrote its files into the folder
// the link named, replacing what was there). A link of this process's own
// user, and anything that is not a link, are fine; a path not there too.
func NotOthersLink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil
	}
	if uid, ok := fileowner.Of(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s is a symbolic link that user %d made, and another user's link is not followed (one planted in a shared folder?): remove it, or give a folder of your own", path, uid)
	}
	return nil
}

// PrepareDir makes dir and its parents and checks that this process can
// create files there (CheckDir), before a run does work whose results
// would go there. The error names what gave the folder (a flag:
// "--document-json-out-dir") and says to give one this user can write.
func PrepareDir(dir, what string) error {
	err := os.MkdirAll(dir, 0o777)
	if err == nil {
		err = CheckDir(dir)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w (give a folder this user, uid %d, can write)", what, dir, err, os.Getuid())
	}
	return nil
}

// WriteFile atomically replaces path with data, creating parent directories.
// perm is the mode as os.WriteFile takes it, before the umask (Umask).
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write atomically replaces path with whatever fill writes, its mode perm
// less the umask (Umask), as os.OpenFile would create it, or, replacing a
// file, that file's mode. If fill fails,
// the destination is left untouched and the temporary file removed.
func Write(path string, perm os.FileMode, fill func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	sweepOnce(dir)
	f, err := os.CreateTemp(dir, tempPattern(filepath.Base(path)))
	if err != nil {
		return err
	}
	tmp := f.Name()
	// Held until the file is renamed and closed: a writer killed half-way
	// leaves its temporary file unlocked, which Sweep then removes.
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	closed := false
	defer func() {
		if !closed {
			f.Close()
		}
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err = fill(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	mode := perm &^ Umask()
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		// A file replaced keeps its mode, as an editor keeps it: a run
		// resumed by a teammate under umask 077 made the first run's
		// metadata private, and every later resume failed on it. Not
		// its write permission for everyone, unless this process's own
		// mode gives it: a file another user planted under the name (in
		// a shared folder) made the output one anybody could change.
		mode = fi.Mode().Perm() &^ (0o002 &^ mode)
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	closed = true
	return f.Close()
}

// staleAge is how long a temporary file has not been written before Sweep
// takes it for a killed writer's (with its lock gone): a writer locks its
// file the moment it has made it.
const staleAge = 2 * time.Second

// maxSwept bounds the folders sweepOnce remembers: a service writes into
// a new folder for every job, for as long as it runs.
const maxSwept = 4096

// swept holds the folders this process has swept (sweepOnce), up to
// maxSwept, then starts again (a folder swept twice costs one more read of
// its names).
var swept struct {
	sync.Mutex
	dirs map[string]bool
}

// sweepOnce sweeps dir the first time this process writes into it.
func sweepOnce(dir string) {
	swept.Lock()
	if swept.dirs[dir] {
		swept.Unlock()
		return
	}
	if swept.dirs == nil || len(swept.dirs) >= maxSwept {
		swept.dirs = map[string]bool{}
	}
	swept.dirs[dir] = true
	swept.Unlock()
	Sweep(dir)
}

// Where a file system's locks do not reach the other hosts writing into
// it (NFS mounted nolock or local_lock, some FUSE file systems), a writer
// on another host whose file has not been written for staleAge may lose it
// to a sweep here; its rename then fails with an error (no file is left
// half-written). docs/pageclass.md says so.

// Sweep removes from dir the temporary files of writers killed half-way
// (".<name>.tmp-<digits>", made by Write): regular files of this user that
// no writer holds locked and that have not been written for staleAge. A
// run killed with SIGKILL while it wrote a table left one, which no later
// run removed. It returns the names removed; what it cannot read or remove
// it leaves. Write sweeps each folder the first time a process writes
// into it.
func Sweep(dir string) []string {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	var removed []string
	for {
		ents, err := d.ReadDir(1024)
		for _, e := range ents {
			if e.Type().IsRegular() && tempName(e.Name()) && removeStale(filepath.Join(dir, e.Name())) {
				removed = append(removed, e.Name())
			}
		}
		if err != nil {
			return removed
		}
	}
}

// tempName says whether name is one tempPattern makes: ".<name>.tmp-"
// and digits.
func tempName(name string) bool {
	i := strings.LastIndex(name, ".tmp-")
	if !strings.HasPrefix(name, ".") || i < 1 || i+len(".tmp-") == len(name) {
		return false
	}
	return strings.Trim(name[i+len(".tmp-"):], "0123456789") == ""
}

// removeStale removes the temporary file p when it is this user's, has not
// been written for staleAge and no writer holds it locked.
func removeStale(p string) bool {
	// Opened for writing: NFS emulates flock with POSIX locks, whose
	// exclusive lock needs a file open for writing (a read-only one was
	// never locked there, so nothing was swept). Nothing is written.
	f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) < staleAge {
		return false
	}
	if !fileowner.Mine(fi) {
		return false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // its writer is alive, or the file system has no locks
	}
	if now, err := os.Lstat(p); err != nil || !os.SameFile(now, fi) {
		return false
	}
	return os.Remove(p) == nil
}
