package classify_test

import (
	"os"
	"path/filepath"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/modelmeta"
)

// The demo digests are those of the shipped demo models, every one of
// them: retraining a demo model without updating the list fails here.
func TestDemoDigests(t *testing.T) {
	folders, err := classify.DemoEnsemble("../../../weights/demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range folders {
		d, err := modelmeta.Digest(f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if !classify.IsDemoDigest(d) {
			t.Errorf("%s (%s) is not among the demo digests", f.Dir, d)
		}
	}
	if n := classify.DemoDigestCount(); n != len(folders) {
		t.Errorf("%d demo digests, %d shipped demo models", n, len(folders))
	}
}

// A copy of a shipped demo model given as a folder of one's own is demo
// (its results were labelled as the published model's); a model of one's
// own is not.
func TestDemoByDigest(t *testing.T) {
	demo, err := classify.DemoEnsemble("../../../weights/demo")
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), "model_v14")
	os.MkdirAll(copied, 0o777)
	for _, name := range []string{modelmeta.MetaFile, modelmeta.WeightsFile} {
		b, err := os.ReadFile(filepath.Join(demo[0].Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(copied, name), b, 0o666)
	}
	own := classifytest.ModelDir(t, filepath.Join(t.TempDir(), "own"), classifytest.Five()[0])
	for _, tc := range []struct {
		dir  string
		demo bool
	}{{copied, true}, {own, false}} {
		m, err := classify.LoadFolder(classify.Folder{Dir: tc.dir}, "cpu")
		if err != nil {
			t.Fatal(err)
		}
		if m.Demo != tc.demo {
			t.Errorf("%s: demo %v, want %v", tc.dir, m.Demo, tc.demo)
		}
		m.Close()
	}
}
