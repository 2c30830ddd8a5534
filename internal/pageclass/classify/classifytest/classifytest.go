// Package classifytest builds model folders from the native-core fixture
// models and finds the shared sample pages, for tests of the classifier and
// its users (cmd/pageclass, the HTTP service).
package classifytest

import (
	"archivekit/internal/testenv"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
)

// Spec describes a test model folder.
type Spec struct {
	// Fixture is the TorchScript file in the fixture folder, e.g. "tiny_cnn.pt".
	Fixture string
	// Revision is written to model.json ("" for none).
	Revision string
	// Size, Mean and Std are the preprocessing; zero Mean/Std mean 0.5.
	Size      int
	Mean, Std [3]float64
	// Labels are the output labels; nil means the canonical eleven.
	Labels []string
}

// ModelDir writes a model folder dir (model.pt copied from the fixture,
// model.json through modelmeta.Save) and returns dir.
func ModelDir(t testing.TB, dir string, s Spec) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.Fixtures(t), s.Fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, modelmeta.WeightsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	labels := s.Labels
	if labels == nil {
		labels = modelmeta.Categories
	}
	mean, std := s.Mean, s.Std
	if mean == ([3]float64{}) {
		mean = registry.HalfMean
	}
	if std == ([3]float64{}) {
		std = registry.HalfStd
	}
	m := &modelmeta.Meta{
		FormatVersion: modelmeta.FormatVersion,
		Labels:        labels,
		Preprocess:    registry.Preprocess{Size: s.Size, Resize: registry.ResizeBilinear, Mean: mean, Std: std},
		Revision:      s.Revision,
		Base:          "tiny-test",
		License:       "MIT",
		Trainable:     true,
		Provenance:    modelmeta.Provenance{Method: "random-init", Source: s.Fixture},
	}
	if err := modelmeta.Save(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Five are five test model specs of distinct architectures and
// preprocessings (sizes 32, 48 and 64, two normalisations), one per ensemble
// revision in registry.Ensemble order.
func Five() []Spec {
	return []Spec{
		{Fixture: "tiny_cnn.pt", Revision: "v1.4", Size: 32},
		{Fixture: "tiny_vit.pt", Revision: "v2.4", Size: 32},
		{Fixture: "avg_a.pt", Revision: "v3.4", Size: 48},
		{Fixture: "avg_b.pt", Revision: "v4.4", Size: 32, Mean: registry.ImageNetMean, Std: registry.ImageNetStd},
		{Fixture: "avg_c.pt", Revision: "v5.4", Size: 64},
	}
}

// Ensemble writes the five test models as root/model_v14 ... root/model_v54
// and returns root.
func Ensemble(t testing.TB, root string) string {
	t.Helper()
	for _, s := range Five() {
		ModelDir(t, filepath.Join(root, registry.ModelDirName(s.Revision)), s)
	}
	return root
}

// PagesDir returns the shared sample pages folder (../shared/data/pages,
// found by walking up from the working directory); the test is skipped when
// it is absent.
func PagesDir(t testing.TB) string {
	t.Helper()
	return testenv.Data(t, "pages")
}

// Pages returns the first perCategory pages (by name) of every category
// folder of the shared sample pages, category by category.
func Pages(t testing.TB, perCategory int) []string {
	t.Helper()
	root := PagesDir(t)
	var out []string
	for _, c := range modelmeta.Categories {
		files, err := filepath.Glob(filepath.Join(root, c, "*.png"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(files)
		if len(files) > perCategory {
			files = files[:perCategory]
		}
		out = append(out, files...)
	}
	return out
}
