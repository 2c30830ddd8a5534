package atomicfile

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteReplacesAndFailureKeepsOld(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "out.csv")
	if err := WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Write(p, 0o644, func(w io.Writer) error { w.Write([]byte("partial")); return boom }); !errors.Is(err, boom) {
		t.Fatalf("want boom, got %v", err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "one" {
		t.Fatalf("old content lost: %q", b)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Fatalf("temporary file left behind: %v", ents)
	}
}

// A destination whose name is legal, however long, can be written: its
// temporary file's name, which repeats it, is cut (a 240-byte name failed
// with "file name too long", naming the temporary file). Names of 255
// bytes, ASCII and Czech (two bytes a letter), are the longest legal ones.
func TestLongNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		strings.Repeat("y", 243) + ".alto.xml",
		strings.Repeat("ž", 125) + ".png",
		strings.Repeat("w", 248) + "-1.json",
	} {
		p := filepath.Join(dir, name)
		if err := WriteFile(p, []byte(name), 0o644); err != nil {
			t.Errorf("%d bytes: %v", len(name), err)
			continue
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != name {
			t.Errorf("%d bytes: read back %v", len(name), err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestUmask: a file written is given its mode less the process's umask, as
// os.WriteFile's are, and so is a folder it creates (under umask 077
// results were 0644, readable by everyone; under 002 not group-writable).
// Each umask runs in a child process, which sets it before anything reads
// it (Umask is read once).
func TestUmask(t *testing.T) {
	if m := os.Getenv("ATOMICFILE_TEST_UMASK"); m != "" {
		u, _ := strconv.ParseUint(m, 8, 32)
		syscall.Umask(int(u))
		dir := os.Getenv("ATOMICFILE_TEST_DIR")
		if err := WriteFile(filepath.Join(dir, "sub", "out.csv"), []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
		// A file replaced keeps its own mode, whatever the umask.
		if err := WriteFile(filepath.Join(dir, "kept.csv"), []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(filepath.Join(dir, "planted.csv"), []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, c := range []struct {
		umask     string
		file, dir os.FileMode
	}{
		{"077", 0o600, 0o700},
		{"022", 0o644, 0o755},
		{"002", 0o664, 0o775},
		{"000", 0o666, 0o777},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "kept.csv"), []byte("old"), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, "kept.csv"), 0o640); err != nil {
			t.Fatal(err)
		}
		// A file writable by everyone (as another user plants one in a
		// shared folder): replaced, it is not, unless the umask gives it.
		if err := os.WriteFile(filepath.Join(dir, "planted.csv"), []byte("old"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, "planted.csv"), 0o666); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestUmask$")
		cmd.Env = append(os.Environ(), "ATOMICFILE_TEST_UMASK="+c.umask, "ATOMICFILE_TEST_DIR="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("umask %s: %v\n%s", c.umask, err, out)
		}
		f, err := os.Stat(filepath.Join(dir, "sub", "out.csv"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := os.Stat(filepath.Join(dir, "sub"))
		if err != nil {
			t.Fatal(err)
		}
		if f.Mode().Perm() != c.file || d.Mode().Perm() != c.dir {
			t.Errorf("umask %s: file %v, folder %v; want %v, %v", c.umask, f.Mode().Perm(), d.Mode().Perm(), c.file, c.dir)
		}
		if k, err := os.Stat(filepath.Join(dir, "kept.csv")); err != nil || k.Mode().Perm() != 0o640 {
			t.Errorf("umask %s: a file replaced: %v %v, want its mode 0640 kept", c.umask, k, err)
		}
		want := os.FileMode(0o664)
		if c.umask == "000" {
			want = 0o666
		}
		if p, err := os.Stat(filepath.Join(dir, "planted.csv")); err != nil || p.Mode().Perm() != want {
			t.Errorf("umask %s: a file writable by everyone replaced: %v %v, want %v", c.umask, p.Mode(), err, want)
		}
	}
}

// TestNotOthersLink: a link another user made is refused, naming it and
// its maker; one of this user's own, a folder and a missing path are not.
func TestNotOthersLink(t *testing.T) {
	dir := t.TempDir()
	target := t.TempDir()
	own := filepath.Join(dir, "own")
	if err := os.Symlink(target, own); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{own, target, filepath.Join(dir, "missing")} {
		if err := NotOthersLink(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if os.Getuid() != 0 {
		t.Skip("a link of another user needs root to make")
	}
	planted := filepath.Join(dir, "downloaded_inputs")
	if err := os.Symlink(target, planted); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(planted, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := NotOthersLink(planted); err == nil || !strings.Contains(err.Error(), planted+" is a symbolic link that user 65534 made") {
		t.Errorf("another user's link: %v", err)
	}
}

// TestSweep: the temporary file of a writer killed half-way (SIGKILL) is
// removed by the next process writing into its folder; a live writer's is
// kept, as are a fresh one, other hidden files, links and folders named like
// one.
func TestSweep(t *testing.T) {
	if os.Getenv("ATOMICFILE_SWEEP_CHILD") != "" {
		// The writer: it writes part of a file, says so, and waits to be
		// killed.
		Write(filepath.Join(os.Getenv("ATOMICFILE_SWEEP_CHILD"), "table.csv"), 0o644, func(w io.Writer) error {
			w.Write([]byte("a,b\n"))
			os.Stdout.WriteString("ready\n")
			io.Copy(io.Discard, os.Stdin) // until the parent kills it
			return nil
		})
		os.Exit(0)
	}
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestSweep$")
	child.Env = append(os.Environ(), "ATOMICFILE_SWEEP_CHILD="+dir)
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	line := make([]byte, 6)
	if _, err := io.ReadFull(stdout, line); err != nil || string(line) != "ready\n" {
		child.Process.Kill()
		t.Fatalf("child: %q %v", line, err)
	}
	temps, _ := filepath.Glob(filepath.Join(dir, ".table.csv.tmp-*"))
	if len(temps) != 1 {
		t.Fatalf("the writer's temporary file: %v", temps)
	}
	old := time.Now().Add(-time.Minute)
	age := func(p string) {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	age(temps[0])
	if got := Sweep(dir); len(got) != 0 {
		t.Errorf("a live writer's temporary file swept: %v", got)
	}
	child.Process.Kill()
	child.Wait()

	// Beside it: a fresh one of a killed writer, a hidden file, a link and a
	// folder named like temporary files.
	fresh := filepath.Join(dir, ".fresh.xml.tmp-123")
	hidden := filepath.Join(dir, ".notes.tmp-x1")
	for _, p := range []string{fresh, hidden} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	age(hidden)
	// "Fresh" whatever the machine's pace: written an hour from now.
	soon := time.Now().Add(time.Hour)
	if err := os.Chtimes(fresh, soon, soon); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(temps[0], filepath.Join(dir, ".link.csv.tmp-9")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".folder.tmp-7"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The next write into the folder sweeps it.
	if err := WriteFile(filepath.Join(dir, "other.csv"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := ".folder.tmp-7 .fresh.xml.tmp-123 .link.csv.tmp-9 .notes.tmp-x1 other.csv"; strings.Join(left, " ") != want {
		t.Errorf("left %v, want %s", left, want)
	}
}

func TestTempName(t *testing.T) {
	for name, want := range map[string]bool{
		".table.csv.tmp-2435125264": true, ".x.tmp-1": true, "." + strings.Repeat("é", 100) + ".tmp-12": true,
		"table.csv.tmp-1": false, ".table.csv.tmp-": false, ".table.csv.tmp-12a": false, ".tmp-12": false, ".write-check-12": false,
	} {
		if tempName(name) != want {
			t.Errorf("tempName(%q) = %v, want %v", name, !want, want)
		}
	}
}

// TestPrepareDir: PrepareDir makes a folder with its parents and checks
// that files can be created there, leaving no trace of the check; a folder
// it cannot make, or one that exists but takes no files, is an error that
// names the flag and the folder. Failing, a run given a folder it cannot
// write did all its work and failed only at its first result, naming that
// file (or the check's .write-check-* files piled up in the output).
func TestPrepareDir(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		ok   bool
	}{
		{"new nested folder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "a", "b", "c") }, true},
		{"existing empty folder", func(t *testing.T) string { return t.TempDir() }, true},
		{"parent is a regular file", func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(f, "out")
		}, false},
		{"the folder is a regular file", func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "out")
			if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			return f
		}, false},
		// A folder that exists but takes no new file, for root too: the
		// root of procfs (Linux).
		{"existing folder no one can write", func(t *testing.T) string {
			if fi, err := os.Stat("/proc/self/status"); err != nil || !fi.Mode().IsRegular() {
				t.Skip("no procfs at /proc, whose root takes no new files even from root")
			}
			return "/proc"
		}, false},
		// The same, through permissions: these do not bind root, so it is
		// skipped where a file can be made there anyway.
		{"read-only folder", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "ro")
			if err := os.Mkdir(d, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(d, 0o700) })
			if err := os.WriteFile(filepath.Join(d, "probe"), nil, 0o600); err == nil {
				t.Skip("this user (root?) can write a folder of mode 0500: permissions do not bind")
			}
			return d
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			err := PrepareDir(dir, "--out-dir")
			if !tc.ok {
				if err == nil {
					t.Fatalf("PrepareDir(%s) accepted a folder it cannot write", dir)
				}
				if want := "--out-dir " + dir + ": "; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "give a folder this user") {
					t.Errorf("error %q does not name the folder (%q) and say what to do", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				t.Fatalf("folder not made: %v", err)
			}
			if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
				t.Errorf("left in the folder: %v (%v)", ents, err)
			}
			// CheckDir itself, again: it leaves nothing either.
			if err := CheckDir(dir); err != nil {
				t.Fatal(err)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".write-check-*")); len(left) != 0 {
				t.Errorf("CheckDir left %v", left)
			}
		})
	}
}
