package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
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
