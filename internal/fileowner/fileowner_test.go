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

// TestOthersFile: a file of another user is not this process's (as root,
// the test gives one to nobody, 65534; otherwise / is root's).
func TestOthersFile(t *testing.T) {
	p, other := "/", 0
	if os.Getuid() == 0 {
		p, other = filepath.Join(t.TempDir(), "theirs"), 65534
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, other, other); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if uid, ok := fileowner.Of(fi); !ok || uid != other || fileowner.Mine(fi) {
		t.Errorf("%s: owner %d %v, Mine %v; want user %d's, not mine", p, uid, ok, fileowner.Mine(fi), other)
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
