package modelmeta

import (
	"archivekit/internal/testenv"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"archivekit/internal/pageclass/registry"
)

// sharedData returns the path of rel under the shared data folder.
func sharedData(t *testing.T, rel string) string {
	t.Helper()
	return testenv.Data(t, rel)
}

func TestCategoriesMatchSampleFolders(t *testing.T) {
	if !sort.StringsAreSorted(Categories) || len(Categories) != 11 {
		t.Fatalf("categories not 11 sorted names: %v", Categories)
	}
	ents, err := os.ReadDir(sharedData(t, "pages"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if !reflect.DeepEqual(dirs, Categories) {
		t.Errorf("sample category folders %v != %v", dirs, Categories)
	}
	for i, c := range Categories {
		if CategoryIndex(c) != i {
			t.Errorf("CategoryIndex(%s) = %d", c, CategoryIndex(c))
		}
	}
	if CategoryIndex("LICENSE") != -1 {
		t.Error("LICENSE is not a category")
	}
}

func valid() *Meta {
	m, err := ForRevision("v4.4")
	if err != nil {
		panic(err)
	}
	m.License = "MIT"
	m.Provenance = Provenance{Method: "export", Source: "regnety_160"}
	return m
}

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := valid()
	if err := Save(dir, m); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "lacks model.pt") {
		t.Errorf("Load without weights: %v", err)
	}
	os.WriteFile(filepath.Join(dir, WeightsFile), []byte("x"), 0o644)
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("round trip:\n%+v\n%+v", got, m)
	}
	if got.Preprocess.Mean != registry.ImageNetMean || got.Preprocess.Size != 384 || !got.Canonical() {
		t.Errorf("v4.4 metadata %+v", got)
	}
}

// ReadFolder gives what Load parses, model.pt's bytes, and the digest of
// those bytes: sha256 of "model.json", NUL, its bytes, "model.pt", NUL, its
// bytes, as Digest reads it from the folder. It refuses a folder without
// weights, with empty weights, or with a directory for model.pt.
func TestReadFolderIsLoadAndDigest(t *testing.T) {
	dir := t.TempDir()
	if err := Save(dir, valid()); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFolder(dir); err == nil || !strings.Contains(err.Error(), "lacks model.pt") {
		t.Errorf("no weights: %v", err)
	}
	weights := filepath.Join(dir, WeightsFile)
	os.WriteFile(weights, nil, 0o644)
	if _, err := ReadFolder(dir); err == nil || !strings.Contains(err.Error(), "model.pt is empty") {
		t.Errorf("empty weights: %v", err)
	}
	os.Remove(weights)
	os.Mkdir(weights, 0o755)
	if _, err := ReadFolder(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), weights) {
		t.Errorf("a directory for weights: %v", err)
	}
	os.Remove(weights)
	w := []byte(strings.Repeat("\x00weights", 1000))
	os.WriteFile(weights, w, 0o644)
	c, err := ReadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Meta, meta) || !bytes.Equal(c.Weights, w) {
		t.Errorf("ReadFolder: meta %+v (Load: %+v), %d weight bytes (file: %d)", c.Meta, meta, len(c.Weights), len(w))
	}
	js, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	sum := sha256.Sum256(slices.Concat([]byte("model.json\x00"), js, []byte("model.pt\x00"), w))
	want := "sha256:" + hex.EncodeToString(sum[:])
	d, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Digest != want || d != want {
		t.Errorf("ReadFolder's digest %s, Digest %s, want %s", c.Digest, d, want)
	}
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Meta)
		want string
	}{
		{"unknown label", func(m *Meta) { m.Labels[0] = "DRAWING" }, `"DRAWING" is not a category`},
		{"duplicate label", func(m *Meta) { m.Labels[1] = "DRAW" }, `"DRAW" listed twice`},
		{"zero std", func(m *Meta) { m.Preprocess.Std[2] = 0 }, "preprocess.std[2]"},
		{"crop resize", func(m *Meta) { m.Preprocess.Resize = "center-crop" }, "preprocess.resize"},
		{"tiny size", func(m *Meta) { m.Preprocess.Size = 0 }, "preprocess.size 0"},
		{"no licence", func(m *Meta) { m.License = "" }, "license is empty"},
		{"bad revision", func(m *Meta) { m.Revision = "v4" }, "revision"},
		{"future format", func(m *Meta) { m.FormatVersion = 99 }, "format_version 99"},
	}
	for _, tc := range tests {
		m := valid()
		tc.edit(m)
		err := Save(t.TempDir(), m)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "model.json") {
			t.Errorf("%s: error %v, want %q naming model.json", tc.name, err, tc.want)
		}
	}
}

func TestParseRejectsUnknownField(t *testing.T) {
	_, err := Parse([]byte(`{"format_version":1,"labelz":["DRAW"]}`))
	if err == nil || !strings.Contains(err.Error(), "labelz") {
		t.Errorf("unknown field accepted: %v", err)
	}
}

func TestToCanonical(t *testing.T) {
	m := valid()
	m.Labels = []string{"TEXT", "DRAW"}
	got, err := m.ToCanonical([]float32{0.75, 0.25})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, 11)
	want[0], want[7] = 0.25, 0.75
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ToCanonical = %v", got)
	}
	if _, err := m.ToCanonical([]float32{1}); err == nil {
		t.Error("length mismatch accepted")
	}
}
