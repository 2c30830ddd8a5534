package train

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/splits"
)

// A multi-page TIFF in a training folder is refused with an error naming the
// file and its page count, and left out like any unreadable page; before,
// its first page was trained on and the others dropped without a word. A
// one-page TIFF beside it is still a sample.
func TestMultiPageTIFFIsRefused(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "TEXT"), 0o755); err != nil {
		t.Fatal(err)
	}
	multi := hostile.TIFF(hostile.TIFFPage{W: 40, H: 60, Grey: 10}, hostile.TIFFPage{W: 60, H: 40, Grey: 128}, hostile.TIFFPage{W: 30, H: 30, Grey: 250})
	one := hostile.TIFF(hostile.TIFFPage{W: 40, H: 60, Grey: 10})
	for name, b := range map[string][]byte{"scan.tif": multi, "one.tif": one} {
		if err := os.WriteFile(filepath.Join(root, "TEXT", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	items := []splits.Item{{Path: "TEXT/one.tif", Label: "TEXT"}, {Path: "TEXT/scan.tif", Label: "TEXT"}}
	samples, bad, err := loadSamples(context.Background(), root, items, 16, 1, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 1 || samples[0].path != "TEXT/one.tif" {
		var got []string
		for _, s := range samples {
			got = append(got, s.path)
		}
		t.Fatalf("samples = %v, want only TEXT/one.tif", got)
	}
	reason, ok := bad["TEXT/scan.tif"]
	if !ok || !strings.Contains(reason, "scan.tif") || !strings.Contains(reason, "3 pages") {
		t.Fatalf("bad = %v, want TEXT/scan.tif refused naming the file and its 3 pages", bad)
	}
}
