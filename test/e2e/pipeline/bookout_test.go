package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/book/booktest"
	"archivekit/internal/bookout/bookouttest"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// TestBookOutChained: one IIIF manifest with both the translations and the
// page classes, as a publisher asks for it, by chaining the two tools:
// translate --book-out writes a derived manifest (translation annotation
// pages, the translated ALTO in seeAlso), and pageclass -f that derived
// manifest --book-out adds its class annotation pages to it. Each canvas
// of the last manifest links both and keeps the translation's seeAlso;
// the outputs load in iiif-prezi3 (Presentation 3) and iiif-prezi's 2.1
// reader (Presentation 2).
func TestBookOutChained(t *testing.T) {
	root, bin := buildTools(t)
	alto, err := os.ReadFile(testenv.Path(t, "alto/MTX201501307_anon.alto.xml"))
	if err != nil {
		t.Fatal(err)
	}
	api := translatortest.New(translatortest.Config{})
	defer api.Close()
	for _, v3 := range []bool{true, false} {
		name := map[bool]string{true: "Presentation 3", false: "Presentation 2"}[v3]
		t.Run(name, func(t *testing.T) {
			s := booktest.New(t, classifytest.Pages(t, 1)[:2], 2, v3)
			s.SetText(0, alto, "application/alto+xml", "http://www.loc.gov/standards/alto/ns-v2#")
			work := t.TempDir()
			const tBase, cBase = "https://example.org/pub/t/", "https://example.org/pub/c/"
			both := chainBookOut(t, root, bin, api.URL, "cs", s, work, tBase, cBase)
			canvases := readCanvases(t, both, v3)
			if len(canvases) != 2 {
				t.Fatalf("%s: %d canvases, want 2", both, len(canvases))
			}
			for i, c := range canvases {
				var translations, classes int
				for _, a := range c.annotations {
					switch {
					case strings.HasPrefix(a, tBase):
						translations++
					case strings.HasPrefix(a, cBase):
						classes++
					}
				}
				// Canvas 1 has a text file: its translation and its
				// classes; canvas 2 has no text, so classes only.
				if classes != 1 || translations != map[int]int{0: 1, 1: 0}[i] {
					t.Errorf("canvas %s: %d translation and %d class annotation pages (%v)", c.id, translations, classes, c.annotations)
				}
				if i == 0 && (len(c.seeAlso) != 2 || c.seeAlso[0] != s.TextURL(0) || !strings.HasPrefix(c.seeAlso[1], tBase)) {
					t.Errorf("canvas %s: seeAlso %v, want the source ALTO and its translation", c.id, c.seeAlso)
				}
			}
			var pages []string
			for _, d := range []string{filepath.Join(work, "c", "*_classes", "*.json"), filepath.Join(work, "t", "*_en_annotations", "*.json")} {
				p, _ := filepath.Glob(d)
				pages = append(pages, p...)
			}
			if v3 {
				t.Logf("iiif-prezi3: %s", bookouttest.Prezi3(t, both, pages...))
			} else {
				t.Logf("iiif-prezi: %s", bookouttest.Prezi2(t, both, pages...))
			}
		})
	}
}

// buildTools builds pageclass and translate from the tree (the test is
// skipped without the native environment) and returns the tree's root
// and the binaries' folder.
func buildTools(t *testing.T) (root, bin string) {
	t.Helper()
	if !strings.Contains(os.Getenv("CGO_LDFLAGS"), "tshim") {
		t.Skip("needs the native environment to build pageclass and translate: make test, or eval \"$(make -s env)\"")
	}
	root, bin = repoRoot(t), t.TempDir()
	runIn(t, root, nil, "go", "build", "-o", bin+"/", "archivekit/cmd/pageclass", "archivekit/cmd/translate")
	return root, bin
}

// canvas is what a viewer reads of a canvas of a derived manifest: its
// id, the annotation pages (v3 annotations, v2 otherContent) and seeAlso
// links it names.
type canvas struct {
	id                   string
	annotations, seeAlso []string
}

// readCanvases reads the canvases of a Presentation 3 or 2 manifest.
func readCanvases(t *testing.T, path string, v3 bool) []canvas {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []canvas
	if v3 {
		var m struct {
			Items []struct {
				ID          string `json:"id"`
				Annotations []struct {
					ID string `json:"id"`
				} `json:"annotations"`
				SeeAlso []struct {
					ID string `json:"id"`
				} `json:"seeAlso"`
			} `json:"items"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, c := range m.Items {
			x := canvas{id: c.ID}
			for _, a := range c.Annotations {
				x.annotations = append(x.annotations, a.ID)
			}
			for _, a := range c.SeeAlso {
				x.seeAlso = append(x.seeAlso, a.ID)
			}
			out = append(out, x)
		}
		return out
	}
	type ref struct {
		ID string `json:"@id"`
	}
	var m struct {
		Sequences []struct {
			Canvases []struct {
				ID           string          `json:"@id"`
				OtherContent []ref           `json:"otherContent"`
				SeeAlso      json.RawMessage `json:"seeAlso"`
			} `json:"canvases"`
		} `json:"sequences"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, sq := range m.Sequences {
		for _, c := range sq.Canvases {
			x := canvas{id: c.ID}
			for _, a := range c.OtherContent {
				x.annotations = append(x.annotations, a.ID)
			}
			var list []ref
			var one ref
			switch {
			case len(c.SeeAlso) == 0:
			case json.Unmarshal(c.SeeAlso, &list) == nil:
			case json.Unmarshal(c.SeeAlso, &one) == nil:
				list = []ref{one}
			}
			for _, a := range list {
				x.seeAlso = append(x.seeAlso, a.ID)
			}
			out = append(out, x)
		}
	}
	return out
}
