package train

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/imageio/decodertest"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/splits"
)

// TestMain lets the test binary be the decoder processes of
// imageio.Isolation; a file named crash-* crashes its decoder process there.
func TestMain(m *testing.M) {
	decodertest.Serve()
	os.Exit(m.Run())
}

// TestSamplesInDecoderProcesses: training and evaluation pages decoded in
// decoder processes give the pixels decoded in process, and a page that
// crashes its decoder is left out like any unreadable page, named with the
// crash; the others are kept.
func TestSamplesInDecoderProcesses(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "TEXT"), 0o755); err != nil {
		t.Fatal(err)
	}
	page := hostile.TIFF(hostile.TIFFPage{W: 40, H: 60, Grey: 10})
	other := hostile.TIFF(hostile.TIFFPage{W: 60, H: 40, Grey: 200})
	for name, b := range map[string][]byte{"a.tif": page, "crash-b.tif": page, "c.tif": other} {
		if err := os.WriteFile(filepath.Join(root, "TEXT", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	items := []splits.Item{{Path: "TEXT/a.tif", Label: "TEXT"}, {Path: "TEXT/crash-b.tif", Label: "TEXT"}, {Path: "TEXT/c.tif", Label: "TEXT"}}
	iso, err := imageio.NewIsolation(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer iso.Close()
	dec := imageio.DefaultOptions
	dec.Isolation = iso
	got, bad, err := loadSamples(context.Background(), root, items, 16, 2, true, &dec)
	if err != nil {
		t.Fatal(err)
	}
	if reason := bad["TEXT/crash-b.tif"]; len(bad) != 1 || !strings.Contains(reason, "crash-b.tif") || !strings.Contains(reason, "the decoder crashed") {
		t.Fatalf("bad = %v, want only TEXT/crash-b.tif, with its crash", bad)
	}
	want, _, err := loadSamples(context.Background(), root, []splits.Item{items[0], items[2]}, 16, 1, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].path != "TEXT/a.tif" || got[1].path != "TEXT/c.tif" {
		t.Fatalf("samples %d, want a.tif and c.tif", len(got))
	}
	for i := range want {
		if !bytes.Equal(got[i].pix, want[i].pix) {
			t.Errorf("%s: pixels decoded in a decoder process differ from those decoded in process", got[i].path)
		}
	}
}
