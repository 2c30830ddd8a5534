package dirwalk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree makes, under a new folder, the files and folders of spec: "d/"
// a folder, "f" a file, "l -> target" a symbolic link.
func tree(t *testing.T, spec ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, s := range spec {
		p := filepath.Join(root, strings.Fields(s)[0])
		var err error
		switch {
		case strings.Contains(s, " -> "):
			err = os.Symlink(strings.Split(s, " -> ")[1], p)
		case strings.HasSuffix(s, "/"):
			err = os.MkdirAll(p, 0o755)
		default:
			err = os.WriteFile(p, nil, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// visits walks root and lists what fn saw, relative to root: "d/" for a
// folder, "f" for a file, "x !walked" for a folder reached again.
func visits(t *testing.T, root, start string, skip string) []string {
	t.Helper()
	var got []string
	err := Walk(filepath.Join(root, start), func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		switch {
		case errors.Is(err, ErrWalked):
			got = append(got, rel+" !walked")
			return nil
		case err != nil:
			return err
		case d.IsDir():
			got = append(got, rel+"/")
			if d.Name() == skip {
				return filepath.SkipDir
			}
		default:
			got = append(got, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestWalk(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  []string
		start string
		skip  string
		want  string
	}{
		{"a plain tree, as filepath.WalkDir", []string{"in/", "in/a/", "in/a/1.png", "in/b.png"}, "in", "", "in/ in/a/ in/a/1.png in/b.png"},
		{"the root is a link", []string{"real/", "real/1.png", "in -> real"}, "in", "", "in/ in/1.png"},
		{"a sub-folder is a link, walked under its name", []string{"vol/", "vol/1.png", "in/", "in/2.png", "in/photos -> ../vol"}, "in", "", "in/ in/2.png in/photos/ in/photos/1.png"},
		{"a loop", []string{"in/", "in/1.png", "in/loop -> ."}, "in", "", "in/ in/1.png in/loop !walked"},
		{"a loop further up", []string{"in/", "in/a/", "in/a/up -> ..", "in/a/1.png"}, "in", "", "in/ in/a/ in/a/1.png in/a/up !walked"},
		{"two links to one folder", []string{"vol/", "vol/1.png", "in/", "in/x -> ../vol", "in/y -> ../vol"}, "in", "", "in/ in/x/ in/x/1.png in/y !walked"},
		{"a link to a file and one to nothing stay links", []string{"in/", "f.png", "in/f.png -> ../f.png", "in/gone.png -> ../nothing"}, "in", "", "in/ in/f.png in/gone.png"},
		{"SkipDir on a linked folder", []string{"vol/", "vol/1.png", "in/", "in/2.png", "in/x -> ../vol"}, "in", "x", "in/ in/2.png in/x/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tree(t, tc.spec...)
			if got := strings.Join(visits(t, root, tc.start, tc.skip), " "); got != tc.want {
				t.Errorf("walked %s, want %s", got, tc.want)
			}
		})
	}
}

// A missing root is passed to fn with its error, as filepath.WalkDir does.
func TestWalkMissingRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "nothing")
	var seen error
	err := Walk(root, func(p string, d fs.DirEntry, err error) error {
		seen = err
		return err
	})
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(seen, fs.ErrNotExist) {
		t.Errorf("Walk of a missing root: %v (fn saw %v)", err, seen)
	}
}

func ExampleWalk() {
	root, _ := os.MkdirTemp("", "dirwalk")
	defer os.RemoveAll(root)
	os.MkdirAll(filepath.Join(root, "volume-1"), 0o755)
	os.WriteFile(filepath.Join(root, "volume-1", "page-001.png"), nil, 0o644)
	os.Mkdir(filepath.Join(root, "books"), 0o755)
	os.Symlink("../volume-1", filepath.Join(root, "books", "v1"))
	os.Symlink(".", filepath.Join(root, "books", "again"))
	Walk(filepath.Join(root, "books"), func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		if err != nil {
			fmt.Println(rel, "not walked:", errors.Is(err, ErrWalked))
			return nil
		}
		fmt.Println(rel, d.IsDir())
		return nil
	})
	// Output:
	// books true
	// books/again not walked: true
	// books/v1 true
	// books/v1/page-001.png false
}
