package classify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/modelmeta"
)

// A run's digests: taken once per folder, those of the bytes loaded where a
// model was loaded, and a folder whose digest changes between two reads of
// one run is an error.
func TestDigests(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{modelmeta.MetaFile: `{"revision": "v1.4"}`, modelmeta.WeightsFile: "weights"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := modelmeta.Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		loaded []string // digests given to Loaded, in order
		want   string   // Of's answer after them
		err    string   // the error of the last Loaded, if any
	}{
		{"taken from the folder", nil, want, ""},
		{"that of the bytes loaded", []string{"loaded"}, "loaded", ""},
		{"the same bytes loaded twice", []string{"loaded", "loaded"}, "loaded", ""},
		{"files changed between two loads", []string{"first", "second"}, "first", "its files changed during the run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d classify.Digests
			var err error
			for _, l := range tt.loaded {
				err = d.Loaded(dir, l)
			}
			if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("Loaded: %v, want an error with %q", err, tt.err)
			}
			got, err := d.Of(dir)
			if err != nil || got != tt.want {
				t.Fatalf("Of = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	// Taken once: a folder changed after its digest was taken keeps it.
	var d classify.Digests
	if _, err := d.Of(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, modelmeta.WeightsFile), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Of(dir); got != want {
		t.Errorf("Of after a change = %q, want the first %q", got, want)
	}
	if _, err := d.Of(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "model ") {
		t.Errorf("Of of a missing folder: %v", err)
	}
}
