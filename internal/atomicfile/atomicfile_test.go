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
