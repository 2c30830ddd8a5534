package splits_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/pageclass/splits"
)

// foldsSplit writes csv as a folds CSV and applies its column "fold 1" to d.
func foldsSplit(t *testing.T, d *splits.Dataset, csv string) (*splits.Split, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "folds.csv")
	if err := os.WriteFile(p, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := splits.ReadFoldsCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	return f.Split(d, "fold 1")
}

func paths(items []splits.Item) string {
	var out []string
	for _, it := range items {
		out = append(out, it.Path)
	}
	return strings.Join(out, " ")
}

// If broken: a folds CSV putting one page in train and in test is taken
// without a word, and the page trains the model it is tested on.
func TestFoldsCSVPageInTwoParts(t *testing.T) {
	d := &splits.Dataset{Root: "data", Items: []splits.Item{{Path: "TEXT/a-1.png", Label: "TEXT"}, {Path: "TEXT/b-1.png", Label: "TEXT"}}}
	_, err := foldsSplit(t, d, "PNG,fold 1\nTEXT/a-1.png,train\nTEXT/b-1.png,dev\na-1.png,test\n")
	if err == nil || !strings.Contains(err.Error(), "folds.csv:4: TEXT/a-1.png listed again as test (was train)") {
		t.Errorf("error %v, want the page listed again named", err)
	}
	// Listed twice in the same part is no error.
	s, err := foldsSplit(t, d, "PNG,fold 1\nTEXT/a-1.png,train\na-1.png,train\nb-1.png,test\n")
	if err != nil || paths(s.Train) != "TEXT/a-1.png" || paths(s.Test) != "TEXT/b-1.png" {
		t.Errorf("same part twice: %+v, %v", s, err)
	}
}

// If broken: two pages of one name in two category folders, each listed by
// its path in another part, are both given both parts (an error).
func TestFoldsCSVExactPathFirst(t *testing.T) {
	d := &splits.Dataset{Root: "data", Items: []splits.Item{{Path: "DRAW/x.png", Label: "DRAW"}, {Path: "TEXT/x.png", Label: "TEXT"}}}
	s, err := foldsSplit(t, d, "PNG,fold 1\nTEXT/x.png,train\nDRAW/x.png,test\n")
	if err != nil {
		t.Fatal(err)
	}
	if paths(s.Train) != "TEXT/x.png" || paths(s.Test) != "DRAW/x.png" || len(s.Warnings) != 0 {
		t.Errorf("train %q test %q warnings %v, want TEXT/x.png in train, DRAW/x.png in test", paths(s.Train), paths(s.Test), s.Warnings)
	}
}

// If broken: a test size of one half (half test, half dev, nothing to
// train on) is accepted.
func TestStratifiedTestSizeLimit(t *testing.T) {
	d := &splits.Dataset{Root: "data"}
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		d.Items = append(d.Items, splits.Item{Path: "TEXT/" + n + "-1.png", Label: "TEXT"})
	}
	for _, c := range []struct {
		size float64
		ok   bool
	}{{0.5, false}, {0.6, false}, {-0.1, false}, {0.49, true}} {
		_, err := splits.Stratified(d, 1, splits.Options{TestSize: c.size})
		if (err == nil) != c.ok {
			t.Errorf("test size %v: error %v, want ok %v", c.size, err, c.ok)
		}
	}
}
