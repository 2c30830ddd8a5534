package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/bookout"
	"archivekit/internal/bookout/bookouttest"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// TestBookOutMETS: --book-out on OCR-D's real Kant METS (two pages, each
// with a PAGE and an ALTO file) writes mets_en.mets.xml into the output
// folder with the fileGrp OCR-D-MT-EN of the four translations, whose
// locations lead to the written files; removing what was added gives the
// input METS back byte for byte.
func TestBookOutMETS(t *testing.T) {
	in := t.TempDir()
	from := filepath.Join("..", "..", "internal", "book", "testdata", "mets", "ocrd-kant")
	for _, f := range []string{"mets.xml", "OCR-D-GT-ALTO/PAGE_0017_ALTO.xml", "OCR-D-GT-ALTO/PAGE_0020_ALTO.xml", "OCR-D-GT-PAGE/PAGE_0017_PAGE.xml", "OCR-D-GT-PAGE/PAGE_0020_PAGE.xml"} {
		writeFile(t, filepath.Join(in, filepath.FromSlash(f)), readOrFatal(t, filepath.Join(from, filepath.FromSlash(f))))
	}
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), filepath.Join(in, "mets.xml"), "-o", out, "-src", "de", "--vocabulary", "", "--fast-align",
		"--output-mode", "alternative", "--book-out")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := translatedKant(t, out)
	back, err := bookout.RemoveFromMETS(got, "OCR-D-MT-EN")
	if err != nil || !bytes.Equal(back, readOrFatal(t, filepath.Join(in, "mets.xml"))) {
		t.Errorf("removing the added parts does not give the input back (%v)", err)
	}
}

// TestBookOutMETSURL: --book-out on a METS file read from a URL (the Kant
// METS, its locations made absolute, as published METS files have them)
// writes the same book as for a local one: the new fileGrp's locations
// lead to the written translations, the book's own locations are kept,
// and removing what was added gives the served METS back. A served METS
// whose locations are relative gets a warning and no book.
func TestBookOutMETSURL(t *testing.T) {
	srv := newBookServer(t)
	from := filepath.Join("..", "..", "internal", "book", "testdata", "mets", "ocrd-kant")
	for _, f := range []string{"OCR-D-GT-ALTO/PAGE_0017_ALTO.xml", "OCR-D-GT-ALTO/PAGE_0020_ALTO.xml", "OCR-D-GT-PAGE/PAGE_0017_PAGE.xml", "OCR-D-GT-PAGE/PAGE_0020_PAGE.xml"} {
		srv.put("/kant/"+f, readOrFatal(t, filepath.Join(from, filepath.FromSlash(f))))
	}
	mets := bytes.ReplaceAll(readOrFatal(t, filepath.Join(from, "mets.xml")), []byte(`xlink:href="OCR-D-`), []byte(`xlink:href="`+srv.URL+`/kant/OCR-D-`))
	srv.put("/kant/mets.xml", mets)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), srv.URL+"/kant/mets.xml", "-o", out, "-src", "de", "--vocabulary", "", "--fast-align",
		"--output-mode", "alternative", "--book-out")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := translatedKant(t, out)
	if n := bytes.Count(got, []byte(`xlink:href="`+srv.URL+`/kant/OCR-D-`)); n != 6 {
		t.Errorf("%d of the book's 6 locations kept", n)
	}
	back, err := bookout.RemoveFromMETS(got, "OCR-D-MT-EN")
	if err != nil || !bytes.Equal(back, mets) {
		t.Errorf("removing the added parts does not give the served METS back (%v)", err)
	}

	srv.put("/b1/mets.xml", []byte(testMETS))
	srv.put("/b1/ocr/0001.xml", readOrFatal(t, realPAGE))
	out2 := t.TempDir()
	r = runCLI(t, newEnv(api), srv.URL+"/b1/mets.xml", "-o", out2, "--vocabulary", "", "--fast-align", "--book-out")
	if !strings.Contains(r.stderr, "relative to itself") || !strings.Contains(r.stderr, "img/0001.jpg") {
		t.Fatalf("relative locations: exit %d: %s", r.code, r.stderr)
	}
	if got, _ := filepath.Glob(filepath.Join(out2, "*.mets.xml")); len(got) != 0 {
		t.Errorf("relative locations: book written %v", got)
	}
}

// translatedKant reads the Kant book's METS that --book-out wrote into out
// and checks its fileGrp OCR-D-MT-EN: four files in four fptrs, whose
// locations lead to the written translations.
func translatedKant(t *testing.T, out string) []byte {
	t.Helper()
	got := readOrFatal(t, filepath.Join(out, "mets_en.mets.xml"))
	if !bytes.Contains(got, []byte(`<mets:fileGrp USE="OCR-D-MT-EN">`)) || bytes.Count(got, []byte(`<mets:fptr FILEID="OCR-D-MT-EN_`)) != 4 {
		t.Fatalf("new METS:\n%s", got)
	}
	hrefs := regexp.MustCompile(`xlink:href="([^"]*_en\.[a-z.]*xml)"`).FindAllSubmatch(got, -1)
	if len(hrefs) != 4 {
		t.Errorf("%d FLocats of translations, want 4:\n%s", len(hrefs), got)
	}
	for _, m := range hrefs {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(string(m[1])))); err != nil {
			t.Errorf("FLocat %s: %v", m[1], err)
		}
	}
	return got
}

// TestBookOutIIIF: --book-out on a IIIF Presentation 3 manifest over HTTP
// writes one annotation page for the canvas with an ALTO file (its lines
// as supplementing TextualBody annotations in the translation's language,
// each targeting that canvas with an xywh box inside the 800 × 1000
// canvas) and the derived manifest under the output folder, whose canvas
// links the page and the translated ALTO at --book-base-url; both load in
// iiif-prezi3. A Presentation 2 manifest gets a warning and no book.
func TestBookOutIIIF(t *testing.T) {
	srv := newBookServer(t)
	srv.put("/iiif/manifest.json", testManifest(srv.URL))
	srv.put("/iiif/text/1.alto.xml", readOrFatal(t, testenv.Path(t, sampleALTO)))
	srv.put("/iiif/text/2.hocr", readOrFatal(t, realHOCRSmall))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	const base = "https://example.org/pub/"
	r := runCLI(t, newEnv(api), srv.URL+"/iiif/manifest.json", "-o", out, "--vocabulary", "", "--fast-align",
		"--output-mode", "alternative", "--book-out", "--book-base-url", base)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	pagePath := filepath.Join(out, "manifest_en_annotations", "1.json")
	var page struct {
		ID    string `json:"id"`
		Items []struct {
			Motivation string `json:"motivation"`
			Target     string `json:"target"`
			Body       struct{ Type, Value, Language string }
			Generator  struct{ Type, Name string }
		} `json:"items"`
	}
	if err := json.Unmarshal(readOrFatal(t, pagePath), &page); err != nil {
		t.Fatal(err)
	}
	canvas1 := srv.URL + "/iiif/canvas/1"
	box := regexp.MustCompile(`^#xywh=(\d+),(\d+),(\d+),(\d+)$`)
	if page.ID != base+"manifest_en_annotations/1.json" || len(page.Items) == 0 {
		t.Fatalf("annotation page %s: id %q, %d items", pagePath, page.ID, len(page.Items))
	}
	for _, a := range page.Items {
		m := box.FindStringSubmatch(strings.TrimPrefix(a.Target, canvas1))
		if a.Motivation != "supplementing" || a.Body.Type != "TextualBody" || a.Body.Value == "" || !strings.HasPrefix(a.Body.Language, "en-t-") ||
			a.Generator.Type != "Software" || !strings.HasPrefix(a.Generator.Name, "archivekit translate") || m == nil {
			t.Fatalf("annotation %+v", a)
		}
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		w, _ := strconv.Atoi(m[3])
		h, _ := strconv.Atoi(m[4])
		if x+w > 801 || y+h > 1001 {
			t.Errorf("target %s outside the 800 × 1000 canvas", a.Target)
		}
	}
	var m struct {
		ID    string `json:"id"`
		Items []struct {
			ID          string `json:"id"`
			Annotations []struct{ ID, Type string }
			SeeAlso     []struct{ ID, Format, Profile string }
		} `json:"items"`
	}
	manifest := filepath.Join(out, "manifest_en.json")
	if err := json.Unmarshal(readOrFatal(t, manifest), &m); err != nil {
		t.Fatal(err)
	}
	if m.ID != base+"manifest_en.json" || len(m.Items) != 4 || m.Items[0].ID != canvas1 || len(m.Items[0].Annotations) != 1 ||
		m.Items[0].Annotations[0].ID != page.ID || len(m.Items[1].Annotations) != 0 {
		t.Fatalf("derived manifest %+v", m)
	}
	see := m.Items[0].SeeAlso[len(m.Items[0].SeeAlso)-1]
	if see.ID != base+"text/1_en.alto.xml" || see.Format != bookout.ALTOFormat || !strings.HasPrefix(see.Profile, bookout.ALTOProfilePrefix) {
		t.Errorf("seeAlso %+v", see)
	}
	if _, err := os.Stat(filepath.Join(out, "text", "1_en.alto.xml")); err != nil {
		t.Errorf("linked ALTO: %v", err)
	}
	t.Logf("iiif-prezi3: %s", bookouttest.Prezi3(t, manifest, pagePath))

	srv.put("/iiif/v2.json", []byte(`{"@context": "http://iiif.io/api/presentation/2/context.json", "@id": "`+srv.URL+`/iiif/v2.json", "@type": "sc:Manifest",
  "label": "v2", "sequences": [{"@type": "sc:Sequence", "canvases": [{"@id": "`+srv.URL+`/iiif/c1", "@type": "sc:Canvas", "label": "1", "width": 800, "height": 1000,
    "images": [{"@type": "oa:Annotation", "motivation": "sc:painting", "on": "`+srv.URL+`/iiif/c1", "resource": {"@id": "`+srv.URL+`/img/1.jpg", "@type": "dctypes:Image"}}],
    "seeAlso": {"@id": "`+srv.URL+`/iiif/text/1.alto.xml", "profile": "http://www.loc.gov/standards/alto/ns-v4#", "format": "application/xml"}}]}]}`))
	out2 := t.TempDir()
	r = runCLI(t, newEnv(api), srv.URL+"/iiif/v2.json", "-o", out2, "--vocabulary", "", "--fast-align", "--book-out")
	if r.code != exitOK || !strings.Contains(r.stderr, "Presentation 2") {
		t.Fatalf("v2: exit %d: %s", r.code, r.stderr)
	}
	if got, _ := filepath.Glob(filepath.Join(out2, "v2_en*")); len(got) != 0 {
		t.Errorf("v2 manifest: book written %v", got)
	}
}
