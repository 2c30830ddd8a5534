package fileowner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"archivekit/internal/fileowner"
)

func TestOwnFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if uid, ok := fileowner.Of(fi); !ok || uid != os.Getuid() {
		t.Errorf("Of: %d %v, want %d", uid, ok, os.Getuid())
	}
	if !fileowner.Mine(fi) {
		t.Error("Mine: false for a file this process made")
	}
}

func TestRootsFile(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("running as root: / is this process's user's")
	}
	fi, err := os.Stat("/")
	if err != nil {
		t.Fatal(err)
	}
	if uid, ok := fileowner.Of(fi); !ok || uid != 0 || fileowner.Mine(fi) {
		t.Errorf("/: owner %d %v, Mine %v; want root's, not mine", uid, ok, fileowner.Mine(fi))
	}
}

func ExampleOf() {
	fi, err := os.Stat(os.TempDir())
	if err != nil {
		return
	}
	if uid, ok := fileowner.Of(fi); ok && uid != os.Getuid() && fi.Mode().Perm()&0o002 != 0 {
		fmt.Println("another user's folder that everyone can write: do not trust what is in it")
	}
}
