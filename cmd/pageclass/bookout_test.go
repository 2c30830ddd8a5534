package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/book/booktest"
	"archivekit/internal/bookout/bookouttest"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/modelmeta"
)

// TestBookOutIIIF: --book-out DIR on a IIIF Presentation 3 manifest (the
// loopback IIIF stand-in) writes one annotation page per canvas, each a
// classifying annotation on that canvas whose body is a category with
// its score, and the derived manifest linking each page from its canvas;
// they load in iiif-prezi3. A Presentation 2 manifest gets a warning and
// nothing is written.
func TestBookOutIIIF(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	s := booktest.New(t, classifytest.Pages(t, 1), 3, true)
	dir := filepath.Join(e.root, "book-out")
	code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private", "--results", filepath.Join(e.root, "r3"), "--book-out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	var pages []string
	for i := 1; i <= 3; i++ {
		path := filepath.Join(dir, "manifest_classes", fmt.Sprintf("%d.json", i))
		pages = append(pages, path)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Items []struct {
				Motivation, Target string
				Body               struct {
					Value, Purpose string
					Score          float64
				}
			}
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		canvas := fmt.Sprintf("%s/iiif/book/canvas/p%d", s.URL, i)
		if len(page.Items) != 1 {
			t.Fatalf("%s: %d annotations, want 1", path, len(page.Items))
		}
		a := page.Items[0]
		if a.Motivation != "classifying" || a.Target != canvas || a.Body.Purpose != "classifying" ||
			!strings.Contains(" "+strings.Join(modelmeta.Categories, " ")+" ", " "+a.Body.Value+" ") || a.Body.Score <= 0 || a.Body.Score > 1 {
			t.Errorf("%s: %+v", path, a)
		}
	}
	manifest := filepath.Join(dir, "manifest_classes.json")
	var m struct {
		Items []struct {
			ID          string
			Annotations []struct{ ID string }
		}
	}
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Items) != 3 {
		t.Fatalf("derived manifest: %d canvases", len(m.Items))
	}
	for i, c := range m.Items {
		if len(c.Annotations) != 1 || !strings.HasSuffix(c.Annotations[0].ID, fmt.Sprintf("/book-out/manifest_classes/%d.json", i+1)) {
			t.Errorf("canvas %s: annotations %+v", c.ID, c.Annotations)
		}
	}
	t.Logf("iiif-prezi3: %s", bookouttest.Prezi3(t, manifest, pages...))

	v2 := booktest.New(t, classifytest.Pages(t, 1), 2, false)
	dir2 := filepath.Join(e.root, "book-out-v2")
	code, log = e.run(t, "-f", v2.ManifestURL(), "--fetch-private", "--results", filepath.Join(e.root, "r2"), "--book-out", dir2)
	if code != exitOK || !strings.Contains(log, "not a IIIF Presentation 3 manifest") {
		t.Fatalf("v2: exit %d: %s", code, log)
	}
	if _, err := os.Stat(dir2); !os.IsNotExist(err) {
		t.Errorf("v2: %s written (%v)", dir2, err)
	}
}
