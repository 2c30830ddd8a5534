package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
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
