package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/book"
	"archivekit/internal/bookout"
	"archivekit/internal/bookout/bookouttest"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/translator/translatortest"
)

// TestBookOutMETS: --book-out on OCR-D's real Kant METS (two pages, each
// with a PAGE and an ALTO file) writes mets_en.mets.xml into the output
// folder with the fileGrp OCR-D-MT-EN of the four translations, whose
// locations lead to the written files. Written beside the input METS
// (-o its folder), removing what was added gives the input METS back byte
// for byte; written into another folder, the book's own six relative
// locations are rewritten to lead from there to the book's files (each
// read back), and with the old hrefs put back the same holds.
func TestBookOutMETS(t *testing.T) {
	from := filepath.Join("..", "..", "internal", "book", "testdata", "mets", "ocrd-kant")
	api := startAPI(t, translatortest.Config{})
	for _, elsewhere := range []bool{false, true} {
		in := t.TempDir()
		for _, f := range []string{"mets.xml", "OCR-D-GT-ALTO/PAGE_0017_ALTO.xml", "OCR-D-GT-ALTO/PAGE_0020_ALTO.xml", "OCR-D-GT-PAGE/PAGE_0017_PAGE.xml", "OCR-D-GT-PAGE/PAGE_0020_PAGE.xml",
			"OCR-D-IMG/INPUT_0017.tif", "OCR-D-IMG/INPUT_0020.tif"} {
			data := []byte(f) // the page images are not in the repository: their names stand in
			if !strings.HasSuffix(f, ".tif") {
				data = readOrFatal(t, filepath.Join(from, filepath.FromSlash(f)))
			}
			writeFile(t, filepath.Join(in, filepath.FromSlash(f)), data)
		}
		out := in
		if elsewhere {
			out = t.TempDir()
		}
		r := runCLI(t, newEnv(api), filepath.Join(in, "mets.xml"), "-o", out, "-src", "de", "--vocabulary", "", "--fast-align",
			"--output-mode", "alternative", "--book-out")
		if r.code != exitOK {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		got := translatedKant(t, out)
		back, err := bookout.RemoveFromMETS(got, "OCR-D-MT-EN")
		if err != nil {
			t.Fatal(err)
		}
		if elsewhere {
			rel, _ := filepath.Rel(out, in)
			prefix := `xlink:href="` + filepath.ToSlash(rel) + `/`
			if n := bytes.Count(back, []byte(prefix)); n != 6 {
				t.Errorf("%d of the book's 6 locations lead from %s to %s:\n%s", n, out, in, back)
			}
			for _, m := range regexp.MustCompile(`xlink:href="([^"]*)"`).FindAllSubmatch(back, -1) {
				p := filepath.Join(out, filepath.FromSlash(string(m[1])))
				inBook := filepath.Join(in, strings.TrimPrefix(string(m[1]), filepath.ToSlash(rel)+"/"))
				if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, readOrFatal(t, inBook)) {
					t.Errorf("location %s from %s: %v, not the book's file", m[1], out, err)
				}
			}
			back = bytes.ReplaceAll(back, []byte(prefix), []byte(`xlink:href="`))
		}
		if !bytes.Equal(back, readOrFatal(t, filepath.Join(in, "mets.xml"))) {
			t.Errorf("written elsewhere %v: removing the added parts does not give the input back", elsewhere)
		}
	}
}

// TestBookOutMETSFileURLs: a local METS whose locations are file URLs
// the book reader reads relative to the METS (book.FileURLPath), as
// Europeana Newspapers' file://./ALTO/… and KU Leuven's file://image.tif
// (OCR-D's Kant METS, its six hrefs given Europeana's file://./ prefix).
// Written into another folder, those locations become the paths from there
// to the book's files (RFC 8089 has no relative file URL), which the book
// reader, reading the written METS, finds: the same two pages with the
// input's PAGE and ALTO files. With the old hrefs put back, removing the
// translations gives the input.
func TestBookOutMETSFileURLs(t *testing.T) {
	from := filepath.Join("..", "..", "internal", "book", "testdata", "mets", "ocrd-kant")
	in, out := t.TempDir(), t.TempDir()
	texts := []string{"OCR-D-GT-PAGE/PAGE_0017_PAGE.xml", "OCR-D-GT-ALTO/PAGE_0017_ALTO.xml", "OCR-D-GT-PAGE/PAGE_0020_PAGE.xml", "OCR-D-GT-ALTO/PAGE_0020_ALTO.xml"}
	for _, f := range texts {
		writeFile(t, filepath.Join(in, filepath.FromSlash(f)), readOrFatal(t, filepath.Join(from, filepath.FromSlash(f))))
	}
	for _, f := range []string{"OCR-D-IMG/INPUT_0017.tif", "OCR-D-IMG/INPUT_0020.tif"} {
		writeFile(t, filepath.Join(in, filepath.FromSlash(f)), []byte(f)) // the images are not in the repository: their names stand in
	}
	src := bytes.ReplaceAll(readOrFatal(t, filepath.Join(from, "mets.xml")), []byte(`xlink:href="OCR-D-`), []byte(`xlink:href="file://./OCR-D-`))
	writeFile(t, filepath.Join(in, "mets.xml"), src)
	api := startAPI(t, translatortest.Config{})
	r := runCLI(t, newEnv(api), filepath.Join(in, "mets.xml"), "-o", out, "-src", "de", "--vocabulary", "", "--fast-align",
		"--output-mode", "alternative", "--book-out")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := translatedKant(t, out)
	rel, _ := filepath.Rel(out, in)
	prefix := `xlink:href="` + filepath.ToSlash(rel) + `/`
	if bytes.Contains(got, []byte(`file:`)) || bytes.Count(got, []byte(prefix)) != 6 {
		t.Errorf("written METS: want its 6 file://./ locations as paths from %s to %s:\n%s", out, in, got)
	}
	b, err := book.Read(context.Background(), filepath.Join(out, "mets_en.mets.xml"), book.Options{})
	if err != nil || len(b.Pages) != 2 {
		t.Fatalf("book.Read of the written METS: %v", err)
	}
	for i, p := range b.Pages {
		for _, want := range texts[2*i : 2*i+2] {
			found := false
			for _, tx := range p.Texts {
				found = found || tx.Location == filepath.Join(in, filepath.FromSlash(want))
			}
			if !found {
				t.Errorf("page %d: texts %+v, want %s among them", i+1, p.Texts, want)
			}
		}
	}
	back, err := bookout.RemoveFromMETS(got, "OCR-D-MT-EN")
	if err != nil {
		t.Fatal(err)
	}
	if back = bytes.ReplaceAll(back, []byte(prefix), []byte(`xlink:href="file://./`)); !bytes.Equal(back, src) {
		t.Error("with the old hrefs put back, removing the translations does not give the input")
	}
}

// TestBookOutMETSURL: --book-out on a METS file read from a URL (the Kant
// METS, its locations made absolute, as published METS files have them)
// writes the same book as for a local one: the new fileGrp's locations
// lead to the written translations, the book's own locations are kept,
// and removing what was added gives the served METS back
// (TestBookOutMETSURLRelative: relative locations).
func TestBookOutMETSURL(t *testing.T) {
	srv, _, mets, out := kantOverHTTP(t, "/kant/", true)
	got := translatedKant(t, out)
	if n := bytes.Count(got, []byte(`xlink:href="`+srv.URL+`/kant/OCR-D-`)); n != 6 {
		t.Errorf("%d of the book's 6 locations kept", n)
	}
	back, err := bookout.RemoveFromMETS(got, "OCR-D-MT-EN")
	if err != nil || !bytes.Equal(back, mets) {
		t.Errorf("removing the added parts does not give the served METS back (%v)", err)
	}
}

// TestBookOutMETSURLRelative: --book-out on OCR-D's Kant METS served as
// it is, its locations relative to itself (OCR-D-GT-ALTO/...), writes
// them resolved against the METS URL: each of the book's six locations
// is an absolute URL that the server answers with the file the METS
// names, the new fileGrp leads to the written translations, and removing
// what was added and putting the relative hrefs back gives the served
// METS byte for byte.
func TestBookOutMETSURLRelative(t *testing.T) {
	srv, files, mets, out := kantOverHTTP(t, "/pub/kant/", false)
	got := translatedKant(t, out)
	back, err := bookout.RemoveFromMETS(got, "OCR-D-MT-EN")
	if err != nil {
		t.Fatal(err)
	}
	prefix := srv.URL + "/pub/kant/"
	hrefs := regexp.MustCompile(`xlink:href="([^"]*)"`).FindAllSubmatch(back, -1)
	if len(hrefs) != len(files) {
		t.Fatalf("%d locations in the book, want %d:\n%s", len(hrefs), len(files), back)
	}
	for _, h := range hrefs {
		loc := string(h[1])
		rel, ok := strings.CutPrefix(loc, prefix)
		if !ok {
			t.Errorf("location %s is not resolved against %s", loc, prefix)
			continue
		}
		resp, err := http.Get(loc)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(body, files[rel]) {
			t.Errorf("GET %s: %s, %d bytes (%v), want the %d bytes of %s", loc, resp.Status, len(body), err, len(files[rel]), rel)
		}
	}
	if undone := bytes.ReplaceAll(back, []byte(`xlink:href="`+prefix), []byte(`xlink:href="`)); !bytes.Equal(undone, mets) {
		t.Errorf("with the relative locations put back, the METS is not the one served:\n%s", undone)
	}
}

// kantOverHTTP serves OCR-D's Kant book under dir ("/kant/") of a local
// server: its METS (as it is, or with its locations made absolute URLs, as
// published METS files have them), its four text files and, for its two
// page images (not in the repository), their names; it runs translate
// --book-out on the METS URL and returns the server, the files served by
// their path in the book, the METS served and the output folder.
func kantOverHTTP(t *testing.T, dir string, absolute bool) (*bookServer, map[string][]byte, []byte, string) {
	t.Helper()
	srv := newBookServer(t)
	from := filepath.Join("..", "..", "internal", "book", "testdata", "mets", "ocrd-kant")
	files := map[string][]byte{}
	for _, f := range []string{"OCR-D-GT-ALTO/PAGE_0017_ALTO.xml", "OCR-D-GT-ALTO/PAGE_0020_ALTO.xml", "OCR-D-GT-PAGE/PAGE_0017_PAGE.xml", "OCR-D-GT-PAGE/PAGE_0020_PAGE.xml"} {
		files[f] = readOrFatal(t, filepath.Join(from, filepath.FromSlash(f)))
	}
	for _, f := range []string{"OCR-D-IMG/INPUT_0017.tif", "OCR-D-IMG/INPUT_0020.tif"} {
		files[f] = []byte(f)
	}
	for f, data := range files {
		srv.put(dir+f, data)
	}
	mets := readOrFatal(t, filepath.Join(from, "mets.xml"))
	if absolute {
		mets = bytes.ReplaceAll(mets, []byte(`xlink:href="OCR-D-`), []byte(`xlink:href="`+srv.URL+dir+`OCR-D-`))
	}
	srv.put(dir+"mets.xml", mets)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), srv.URL+dir+"mets.xml", "-o", out, "-src", "de", "--vocabulary", "", "--fast-align",
		"--output-mode", "alternative", "--book-out")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	return srv, files, mets, out
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
// iiif-prezi3 (the hOCR canvas gets its page too: TestBookOutIIIFPageHOCR;
// a Presentation 2 manifest: TestBookOutIIIF2).
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
		m.Items[0].Annotations[0].ID != page.ID || len(m.Items[1].Annotations) != 1 {
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
	if strings.Contains(r.stderr, "IIIF ids are file:// URLs") {
		t.Errorf("warned of file:// ids with --book-base-url given:\n%s", r.stderr)
	}

	// Without --book-base-url the ids are the output folder's file://
	// URLs, which viewers do not load: the run says so once, in its log
	// and its run metadata, and still writes the book.
	local := t.TempDir()
	r = runCLI(t, newEnv(api), srv.URL+"/iiif/manifest.json", "-o", local, "--vocabulary", "", "--fast-align", "--book-out")
	if r.code != exitOK {
		t.Fatalf("without --book-base-url: exit %d: %s", r.code, r.stderr)
	}
	const says = "IIIF ids are file:// URLs of "
	if n := strings.Count(r.stderr, says); n != 1 {
		t.Errorf("%d warnings that the ids are file:// URLs, want 1:\n%s", n, r.stderr)
	}
	if w := strings.Join(readParadata(t, local).Warnings, "\n"); !strings.Contains(w, says) || !strings.Contains(w, "--book-base-url") {
		t.Errorf("run metadata warnings %q do not say the ids are file:// URLs", w)
	}
	var lm struct{ ID string }
	if err := json.Unmarshal(readOrFatal(t, filepath.Join(local, "manifest_en.json")), &lm); err != nil || !strings.HasPrefix(lm.ID, "file://") {
		t.Errorf("derived manifest without a base: id %q, %v", lm.ID, err)
	}

	// A canvas whose text file holds no text gets no (empty) annotation
	// page and no link calling its untouched copy a machine translation.
	srv.put("/iiif/text/2.hocr", []byte(`<html><body><div class='ocr_page' title='bbox 0 0 9 9'></div></body></html>`))
	blank := t.TempDir()
	if r = runCLI(t, newEnv(api), srv.URL+"/iiif/manifest.json", "-o", blank, "--vocabulary", "", "--fast-align", "--book-out", "--book-base-url", base); r.code != exitOK {
		t.Fatalf("with a blank page: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(blank, "manifest_en_annotations", "2.json")); err == nil {
		t.Error("an annotation page was written for the canvas without text")
	}
	m.Items = nil
	if err := json.Unmarshal(readOrFatal(t, filepath.Join(blank, "manifest_en.json")), &m); err != nil || len(m.Items) != 4 ||
		len(m.Items[1].Annotations) != 0 || len(m.Items[0].Annotations) != 1 {
		t.Errorf("derived manifest with a blank canvas: %+v, %v", m, err)
	}
	for _, see := range m.Items[1].SeeAlso {
		if strings.Contains(see.ID, "2_en") {
			t.Errorf("the blank canvas links its untouched copy: %+v", see)
		}
	}
}

// TestBookOutIIIF2: --book-out on a real IIIF Presentation 2 manifest (the
// British Library issue of mirador-textoverlay, cut to its first two
// canvases, served with their text files by a loopback server: an ALTO
// file and an hOCR file) writes, per canvas, an sc:AnnotationList whose
// annotations are the translated lines (sc:painting, cnt:ContentAsText in
// the translation's language) on that canvas with an xywh box inside it,
// and the derived v2 manifest whose canvases name their list in
// otherContent and the translated file in seeAlso beside their own link;
// all load in iiif-prezi's 2.1 reader.
func TestBookOutIIIF2(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal(readOrFatal(t, "../../internal/book/testdata/iiif/textoverlay-EAP119-1-8-1_issue1.json"), &m); err != nil {
		t.Fatal(err)
	}
	srv := newBookServer(t)
	srv.put("/iiif/text/1.alto.xml", readOrFatal(t, testenv.Path(t, sampleALTO)))
	srv.put("/iiif/text/2.hocr", readOrFatal(t, realHOCRSmall))
	m["@id"] = srv.URL + "/iiif/book.json"
	seq := m["sequences"].([]any)[0].(map[string]any)
	canvases := seq["canvases"].([]any)[:2]
	seq["canvases"] = canvases
	canvases[0].(map[string]any)["seeAlso"].(map[string]any)["@id"] = srv.URL + "/iiif/text/1.alto.xml"
	canvases[1].(map[string]any)["seeAlso"] = map[string]any{"@id": srv.URL + "/iiif/text/2.hocr", "format": "text/vnd.hocr+html"}
	served, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	srv.put("/iiif/book.json", served)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	const base = "https://example.org/pub/"
	r := runCLI(t, newEnv(api), srv.URL+"/iiif/book.json", "-o", out, "--vocabulary", "", "--fast-align", "--book-out", "--book-base-url", base)
	if r.code != exitOK || strings.Contains(r.stderr, "Presentation 2") || strings.Contains(r.stderr, "no book written") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		ID        string `json:"@id"`
		Type      string `json:"@type"`
		Sequences []struct {
			Canvases []struct {
				ID           string  `json:"@id"`
				Width        float64 `json:"width"`
				Height       float64 `json:"height"`
				OtherContent []struct {
					ID   string `json:"@id"`
					Type string `json:"@type"`
				} `json:"otherContent"`
				SeeAlso []struct {
					ID      string `json:"@id"`
					Format  string `json:"format"`
					Profile string `json:"profile"`
				} `json:"seeAlso"`
			} `json:"canvases"`
		} `json:"sequences"`
	}
	manifest := filepath.Join(out, "book_en.json")
	if err := json.Unmarshal(readOrFatal(t, manifest), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != base+"book_en.json" || got.Type != "sc:Manifest" || len(got.Sequences) != 1 || len(got.Sequences[0].Canvases) != 2 {
		t.Fatalf("derived manifest: @id %q @type %q, %+v", got.ID, got.Type, got.Sequences)
	}
	box := regexp.MustCompile(`^#xywh=(\d+),(\d+),(\d+),(\d+)$`)
	var lists []string
	for i, c := range got.Sequences[0].Canvases {
		wantFormat := []string{bookout.ALTOFormat, bookout.HOCRFormat}[i]
		if len(c.OtherContent) != 1 || c.OtherContent[0].ID != fmt.Sprintf("%sbook_en_annotations/%d.json", base, i+1) ||
			c.OtherContent[0].Type != "sc:AnnotationList" || len(c.SeeAlso) != 2 || c.SeeAlso[1].Format != wantFormat || c.SeeAlso[1].Profile == "" {
			t.Fatalf("canvas %s: otherContent %+v, seeAlso %+v", c.ID, c.OtherContent, c.SeeAlso)
		}
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(strings.TrimPrefix(c.SeeAlso[1].ID, base)))); err != nil {
			t.Errorf("canvas %s: seeAlso %s: %v", c.ID, c.SeeAlso[1].ID, err)
		}
		path := filepath.Join(out, "book_en_annotations", fmt.Sprintf("%d.json", i+1))
		lists = append(lists, path)
		var l struct {
			ID        string `json:"@id"`
			Type      string `json:"@type"`
			Resources []struct {
				Motivation string `json:"motivation"`
				On         string `json:"on"`
				Resource   struct {
					Type     string `json:"@type"`
					Chars    string `json:"chars"`
					Language string `json:"language"`
				} `json:"resource"`
			} `json:"resources"`
		}
		if err := json.Unmarshal(readOrFatal(t, path), &l); err != nil {
			t.Fatal(err)
		}
		if l.ID != c.OtherContent[0].ID || l.Type != "sc:AnnotationList" || len(l.Resources) == 0 {
			t.Fatalf("%s: @id %q @type %q, %d annotations", path, l.ID, l.Type, len(l.Resources))
		}
		for _, a := range l.Resources {
			m := box.FindStringSubmatch(strings.TrimPrefix(a.On, c.ID))
			if a.Motivation != "sc:painting" || a.Resource.Type != "cnt:ContentAsText" || a.Resource.Chars == "" ||
				!strings.HasPrefix(a.Resource.Language, "en-t-") || m == nil {
				t.Fatalf("%s: annotation %+v", path, a)
			}
			x, _ := strconv.ParseFloat(m[1], 64)
			y, _ := strconv.ParseFloat(m[2], 64)
			w, _ := strconv.ParseFloat(m[3], 64)
			h, _ := strconv.ParseFloat(m[4], 64)
			if x+w > c.Width+1 || y+h > c.Height+1 {
				t.Errorf("%s: on %s outside the %v × %v canvas", path, a.On, c.Width, c.Height)
			}
		}
	}
	t.Logf("iiif-prezi: %s", bookouttest.Prezi2(t, manifest, lists...))
}

// TestBookOutIIIFPageHOCR: --book-out on a IIIF Presentation 3 manifest
// whose canvases link real PAGE-XML files (OCR-D's Kant page, its lines
// rectangles; a Transkribus page, PAGE 2013, its lines slanted
// quadrilaterals) and a real hOCR file (ocropy) writes an annotation page
// for each: one annotation a line with text, in document order, whose
// text is the translation of the line (the stand-in's, not the source)
// and whose target is the line's box (PAGE: its Coords polygon's bounds;
// hOCR: its bbox) scaled from the page image onto the 800 × 1000 canvas;
// a PAGE line whose polygon is not a rectangle targets a SpecificResource
// of the canvas with that box as a FragmentSelector and the polygon,
// scaled likewise, as an SvgSelector. The derived manifest links the pages
// and the translated files, labelled with their format; everything loads
// in iiif-prezi3.
func TestBookOutIIIFPageHOCR(t *testing.T) {
	const kantFile = "../../internal/translate/pagexml/testdata/real/ocrd-gt_german_kant1784-0017.page.xml"
	const transkribusFile = "../../internal/translate/pagexml/testdata/real/transkribus_spanish_170025120000003-0074.page.xml"
	srv := newBookServer(t)
	srv.put("/iiif/text/1.page.xml", readOrFatal(t, kantFile))
	srv.put("/iiif/text/2.hocr", readOrFatal(t, realHOCRSmall))
	srv.put("/iiif/text/3.page.xml", readOrFatal(t, transkribusFile))
	canvas := func(n int, see string) string { return iiifCanvas(srv.URL, n, see) }
	srv.put("/iiif/book.json", []byte(fmt.Sprintf(`{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "%s/iiif/book.json", "type": "Manifest",
  "label": {"en": ["PAGE and hOCR"]}, "items": [%s, %s, %s]}`, srv.URL,
		canvas(1, `{"id": "`+srv.URL+`/iiif/text/1.page.xml", "type": "Dataset", "format": "application/vnd.prima.page+xml"}`),
		canvas(2, `{"id": "`+srv.URL+`/iiif/text/2.hocr", "type": "Text", "format": "text/vnd.hocr+html"}`),
		canvas(3, `{"id": "`+srv.URL+`/iiif/text/3.page.xml", "type": "Dataset", "format": "application/vnd.prima.page+xml"}`))))
	const base = "https://example.org/pub/"
	out := bookOutIIIF(t, srv, translatortest.Config{}, "de", base)
	var m struct {
		Items []struct {
			Annotations []struct{ ID string }
			SeeAlso     []struct {
				ID, Format, Profile string
				Label               map[string][]string
			}
		} `json:"items"`
	}
	manifest := filepath.Join(out, "book_en.json")
	if err := json.Unmarshal(readOrFatal(t, manifest), &m); err != nil || len(m.Items) != 3 {
		t.Fatalf("derived manifest: %v, %+v", err, m)
	}
	hocrLines := func() []sourceLine {
		re := regexp.MustCompile(`<span class='ocr_line' title='bbox (\d+) (\d+) (\d+) (\d+)'>([^<]*)</span>`)
		var out []sourceLine
		for _, g := range re.FindAllStringSubmatch(string(readOrFatal(t, realHOCRSmall)), -1) {
			v := make([]float64, 4)
			for i := range v {
				v[i], _ = strconv.ParseFloat(g[i+1], 64)
			}
			out = append(out, sourceLine{text: html.UnescapeString(g[5]), x: v[0], y: v[1], w: v[2] - v[0], h: v[3] - v[1]})
		}
		return out
	}()
	const pageLabel, pageProfile = "PAGE-XML, machine translation (en-t-de-t0-und)", "http://schema.primaresearch.org/PAGE/gts/pagecontent/"
	for i, c := range []struct {
		lines         []sourceLine
		imgW, imgH    float64
		format, label string
		profilePrefix string
		polygons      bool // whether the lines are polygons, not rectangles
	}{
		{pageLines(t, kantFile), 1457, 2083, bookout.PAGEFormat, pageLabel, pageProfile, false},
		{hocrLines, 4299, 3035, bookout.HOCRFormat, "hOCR, machine translation (en-t-de-t0-und)", bookout.HOCRProfile, false},
		{pageLines(t, transkribusFile), 2743, 3965, bookout.PAGEFormat, pageLabel, pageProfile, true},
	} {
		it := m.Items[i]
		if len(it.Annotations) != 1 || len(it.SeeAlso) != 2 {
			t.Fatalf("canvas %d: %+v", i+1, it)
		}
		see := it.SeeAlso[1]
		if see.Format != c.format || !strings.HasPrefix(see.Profile, c.profilePrefix) || len(see.Label["none"]) != 1 || see.Label["none"][0] != c.label {
			t.Errorf("canvas %d seeAlso %+v", i+1, see)
		}
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(strings.TrimPrefix(see.ID, base)))); err != nil {
			t.Errorf("canvas %d: linked file: %v", i+1, err)
		}
		pagePath := filepath.Join(out, filepath.FromSlash(strings.TrimPrefix(it.Annotations[0].ID, base)))
		var page struct {
			Items []struct {
				Target json.RawMessage
				Body   struct{ Value, Language string }
			}
		}
		if err := json.Unmarshal(readOrFatal(t, pagePath), &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != len(c.lines) || len(c.lines) == 0 {
			t.Fatalf("canvas %d: %d annotations, %d source lines", i+1, len(page.Items), len(c.lines))
		}
		canvasID := fmt.Sprintf("%s/iiif/canvas/%d", srv.URL, i+1)
		sx, sy := 800/c.imgW, 1000/c.imgH
		changed, polygons := 0, 0
		for k, a := range page.Items {
			o := c.lines[k]
			want := strings.Join(strings.Fields(translatortest.Translate(o.text)), " ")
			if a.Body.Value != strings.Join(strings.Fields(o.text), " ") {
				changed++
			}
			if a.Body.Value != want {
				t.Errorf("canvas %d line %d: %q, want the translation %q of %q", i+1, k, a.Body.Value, want, o.text)
			}
			if lineTarget(t, fmt.Sprintf("canvas %d line %d", i+1, k), a.Target, canvasID, o, sx, sy) {
				polygons++
			}
		}
		if changed < len(page.Items)/2 {
			t.Errorf("canvas %d: %d of %d annotations differ from the source", i+1, changed, len(page.Items))
		}
		if c.polygons != (polygons > 0) {
			t.Errorf("canvas %d: %d of %d lines targeted by their polygon", i+1, polygons, len(page.Items))
		}
		t.Logf("canvas %d: %d of %d lines targeted by their polygon; iiif-prezi3: %s", i+1, polygons, len(page.Items), bookouttest.Prezi3(t, manifest, pagePath))
	}
}

// sourceLine is a line of a source file as a person reads it: its text,
// its box in the file's pixels and its polygon (PAGE-XML only).
type sourceLine struct {
	text       string
	x, y, w, h float64
	polygon    [][2]float64
}

// rectangle reports whether the line's polygon is its box: four points,
// each a different corner of the box.
func (o sourceLine) rectangle() bool {
	corners := map[[2]float64]bool{}
	for _, p := range o.polygon {
		if (p[0] != o.x && p[0] != o.x+o.w) || (p[1] != o.y && p[1] != o.y+o.h) {
			return false
		}
		corners[p] = true
	}
	return len(o.polygon) == 4 && len(corners) == 4
}

// pageLines reads the lines of a PAGE-XML file: each TextLine's first
// TextEquiv and its Coords polygon with the polygon's bounds.
func pageLines(t *testing.T, file string) []sourceLine {
	t.Helper()
	var doc struct {
		Page struct {
			Regions []struct {
				Lines []struct {
					Coords struct {
						Points string `xml:"points,attr"`
					}
					Text []string `xml:"TextEquiv>Unicode"`
				} `xml:"TextLine"`
			} `xml:"TextRegion"`
		}
	}
	if err := xml.Unmarshal(readOrFatal(t, file), &doc); err != nil {
		t.Fatal(err)
	}
	var out []sourceLine
	for _, rg := range doc.Page.Regions {
		for _, l := range rg.Lines {
			o := sourceLine{text: l.Text[0], x: 1e9, y: 1e9}
			var x1, y1 float64
			for _, pt := range strings.Fields(l.Coords.Points) {
				var x, y float64
				fmt.Sscanf(pt, "%g,%g", &x, &y)
				o.x, o.y, x1, y1 = min(o.x, x), min(o.y, y), max(x1, x), max(y1, y)
				o.polygon = append(o.polygon, [2]float64{x, y})
			}
			o.w, o.h = x1-o.x, y1-o.y
			out = append(out, o)
		}
	}
	return out
}

// lineTarget checks an annotation's target against the source line o:
// the canvas at o's box scaled by sx × sy (within one canvas unit: whole
// units, rounded outwards) or, for a line whose polygon is not its box,
// a SpecificResource of the canvas whose FragmentSelector is that box and
// whose SvgSelector is the polygon scaled (to 0.01). It reports whether
// the target is the polygon.
func lineTarget(t *testing.T, name string, raw json.RawMessage, canvasID string, o sourceLine, sx, sy float64) bool {
	t.Helper()
	var fragment, target string
	polygon := json.Unmarshal(raw, &target) != nil
	if !polygon {
		if o.polygon != nil && !o.rectangle() {
			t.Errorf("%s: target %s, want a SpecificResource for the polygon %v", name, raw, o.polygon)
		}
		fragment = strings.TrimPrefix(target, canvasID+"#")
	} else {
		var sr struct {
			Type, Source string
			Selector     []struct{ Type, ConformsTo, Value string }
		}
		if err := json.Unmarshal(raw, &sr); err != nil || sr.Type != "SpecificResource" || sr.Source != canvasID || len(sr.Selector) != 2 ||
			sr.Selector[0].Type != "FragmentSelector" || sr.Selector[0].ConformsTo != "http://www.w3.org/TR/media-frags/" || sr.Selector[1].Type != "SvgSelector" || o.rectangle() {
			t.Fatalf("%s: target %s (%v) for the polygon %v", name, raw, err, o.polygon)
		}
		fragment = sr.Selector[0].Value
		m := regexp.MustCompile(`^<svg xmlns='http://www.w3.org/2000/svg'><path d='M([^']*) Z'/></svg>$`).FindStringSubmatch(sr.Selector[1].Value)
		if m == nil || len(strings.Split(m[1], " L")) != len(o.polygon) {
			t.Fatalf("%s: SVG %s, want a closed path through the %d points of %v", name, sr.Selector[1].Value, len(o.polygon), o.polygon)
		}
		for j, pt := range strings.Split(m[1], " L") {
			var x, y float64
			if _, err := fmt.Sscanf(pt, "%g,%g", &x, &y); err != nil || math.Abs(x-o.polygon[j][0]*sx) > 0.01 || math.Abs(y-o.polygon[j][1]*sy) > 0.01 {
				t.Errorf("%s: SVG point %d %s, want %v scaled by %g × %g", name, j, pt, o.polygon[j], sx, sy)
			}
		}
	}
	var x, y, w, h float64
	if _, err := fmt.Sscanf(fragment, "xywh=%g,%g,%g,%g", &x, &y, &w, &h); err != nil {
		t.Fatalf("%s: target %s: %v", name, raw, err)
	}
	// Whole canvas units, rounded outwards: within one unit.
	if math.Abs(x-o.x*sx) > 1 || math.Abs(y-o.y*sy) > 1 || math.Abs(x+w-(o.x+o.w)*sx) > 1 || math.Abs(y+h-(o.y+o.h)*sy) > 1 {
		t.Errorf("%s: target %s, want the box %g,%g,%g,%g scaled by %g × %g", name, raw, o.x, o.y, o.w, o.h, sx, sy)
	}
	return polygon
}

// TestBookOutIIIFALTOShape: --book-out on a IIIF Presentation 3 manifest
// whose canvas has a real eScriptorium ALTO 4 page (TextLine
// Shape/Polygon outlines, "x y x y" POINTS) targets each of its lines
// whose polygon is not a rectangle with a SpecificResource: the polygon's
// bounds as a FragmentSelector and the polygon, read from the file and
// scaled onto the 800 × 1000 canvas, as an SvgSelector; its two
// rectangular lines and its line without a Shape keep the xywh target.
// (The stand-in leaves Hebrew as it is, so the bodies are checked against
// its translation, which is the source.)
func TestBookOutIIIFALTOShape(t *testing.T) {
	const file = "../../internal/translate/alto/testdata/real/escriptorium_hebrew_bsb00084914-00007.alto.xml"
	srv := newBookServer(t)
	srv.put("/iiif/text/1.alto.xml", readOrFatal(t, file))
	srv.put("/iiif/book.json", []byte(fmt.Sprintf(`{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "%s/iiif/book.json", "type": "Manifest",
  "label": {"en": ["eScriptorium ALTO"]}, "items": [%s]}`, srv.URL,
		iiifCanvas(srv.URL, 1, `{"id": "`+srv.URL+`/iiif/text/1.alto.xml", "type": "Dataset", "format": "application/alto+xml"}`))))
	const base = "https://example.org/pub/"
	out := bookOutIIIF(t, srv, translatortest.Config{Pairs: []string{"he-en"}}, "he", base)
	var m struct {
		Items []struct{ Annotations []struct{ ID string } } `json:"items"`
	}
	manifest := filepath.Join(out, "book_en.json")
	if err := json.Unmarshal(readOrFatal(t, manifest), &m); err != nil || len(m.Items) != 1 || len(m.Items[0].Annotations) != 1 {
		t.Fatalf("derived manifest: %v, %+v", err, m)
	}
	pagePath := filepath.Join(out, filepath.FromSlash(strings.TrimPrefix(m.Items[0].Annotations[0].ID, base)))
	var page struct {
		Items []struct {
			Target json.RawMessage
			Body   struct{ Value string }
		}
	}
	if err := json.Unmarshal(readOrFatal(t, pagePath), &page); err != nil {
		t.Fatal(err)
	}
	lines := altoShapeLines(t, file)
	if len(page.Items) != len(lines) || len(lines) != 31 {
		t.Fatalf("%d annotations, %d source lines", len(page.Items), len(lines))
	}
	polygons := 0
	for k, a := range page.Items {
		o := lines[k]
		if want := strings.Join(strings.Fields(translatortest.Translate(o.text)), " "); a.Body.Value != want {
			t.Errorf("line %d: %q, want %q", k, a.Body.Value, want)
		}
		if lineTarget(t, fmt.Sprintf("line %d", k), a.Target, srv.URL+"/iiif/canvas/1", o, 800/3177.0, 1000/4308.0) {
			polygons++
		}
	}
	if polygons != 28 {
		t.Errorf("%d of %d lines targeted by their polygon, want 28", polygons, len(page.Items))
	}
	t.Logf("%d of %d lines targeted by their polygon; iiif-prezi3: %s", polygons, len(page.Items), bookouttest.Prezi3(t, manifest, pagePath))
}

// iiifCanvas is canvas n of a Presentation 3 manifest served at base:
// 800 × 1000, one painted image, see its seeAlso entries.
func iiifCanvas(base string, n int, see string) string {
	return fmt.Sprintf(`{"id": "%[1]s/iiif/canvas/%[2]d", "type": "Canvas", "width": 800, "height": 1000,
  "items": [{"id": "%[1]s/iiif/canvas/%[2]d/page", "type": "AnnotationPage", "items": [{"id": "%[1]s/iiif/canvas/%[2]d/image", "type": "Annotation",
    "motivation": "painting", "target": "%[1]s/iiif/canvas/%[2]d", "body": {"id": "%[1]s/img/%[2]d.jpg", "type": "Image", "format": "image/jpeg"}}]}],
  "seeAlso": [%[3]s]}`, base, n, see)
}

// bookOutIIIF runs translate --book-out --book-base-url base on the
// manifest srv serves at /iiif/book.json, from language src, with a
// stand-in MT API of cfg; it returns the output folder.
func bookOutIIIF(t *testing.T, srv *bookServer, cfg translatortest.Config, src, base string) string {
	t.Helper()
	api := startAPI(t, cfg)
	out := t.TempDir()
	r := runCLI(t, newEnv(api), srv.URL+"/iiif/book.json", "-o", out, "-src", src, "--vocabulary", "", "--fast-align",
		"--book-out", "--book-base-url", base)
	if r.code != exitOK || strings.Contains(r.stderr, "get no annotations") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	return out
}

// altoShapeLines reads the lines of an ALTO 4 file as a person does: each
// TextLine's String CONTENTs and, when it has a Shape/Polygon ("x y x y"
// POINTS), that polygon and its bounds, else its HPOS/VPOS/WIDTH/HEIGHT.
func altoShapeLines(t *testing.T, file string) []sourceLine {
	t.Helper()
	var doc struct {
		Lines []struct {
			HPOS, VPOS, WIDTH, HEIGHT float64 `xml:",attr"`
			Polygon                   struct {
				Points string `xml:"POINTS,attr"`
			} `xml:"Shape>Polygon"`
			Strings []struct {
				Content string `xml:"CONTENT,attr"`
			} `xml:"String"`
		} `xml:"Layout>Page>PrintSpace>TextBlock>TextLine"`
	}
	if err := xml.Unmarshal(readOrFatal(t, file), &doc); err != nil {
		t.Fatal(err)
	}
	var out []sourceLine
	for _, l := range doc.Lines {
		var words []string
		for _, s := range l.Strings {
			words = append(words, s.Content)
		}
		o := sourceLine{text: strings.Join(words, " "), x: l.HPOS, y: l.VPOS, w: l.WIDTH, h: l.HEIGHT}
		if nums := strings.Fields(l.Polygon.Points); len(nums) > 0 {
			x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
			for j := 0; j+1 < len(nums); j += 2 {
				x, errX := strconv.ParseFloat(nums[j], 64)
				y, errY := strconv.ParseFloat(nums[j+1], 64)
				if errX != nil || errY != nil {
					t.Fatalf("%s: POINTS %q", file, l.Polygon.Points)
				}
				o.polygon = append(o.polygon, [2]float64{x, y})
				x0, y0, x1, y1 = math.Min(x0, x), math.Min(y0, y), math.Max(x1, x), math.Max(y1, y)
			}
			o.x, o.y, o.w, o.h = x0, y0, x1-x0, y1-y0
		}
		out = append(out, o)
	}
	return out
}

// TestBookOutCollection: a IIIF Presentation 3 collection of two
// manifests (the first listed by reference, the second embedded whole)
// gives, with --book-out, each manifest's translation annotation pages and
// derived manifest (<collection>_<k>_en), each page on its own manifest's
// canvas, and the derived collection <collection>_en.json listing the
// derived manifests in the place of the manifests; they load in
// iiif-prezi3. Before, a collection got a warning and nothing.
func TestBookOutCollection(t *testing.T) {
	srv := newBookServer(t)
	vols := []string{srv.URL + "/v1", srv.URL + "/v2"}
	for _, v := range vols {
		p := strings.TrimPrefix(v, srv.URL)
		srv.put(p+"/iiif/manifest.json", testManifest(v))
		srv.put(p+"/iiif/text/1.alto.xml", readOrFatal(t, testenv.Path(t, sampleALTO)))
		srv.put(p+"/iiif/text/2.hocr", readOrFatal(t, realHOCRSmall))
	}
	srv.put("/volumes.json", []byte(fmt.Sprintf(`{"@context": "http://iiif.io/api/presentation/3/context.json",
 "id": "%s/volumes.json", "type": "Collection", "label": {"en": ["Two volumes"]},
 "items": [{"id": "%s/iiif/manifest.json", "type": "Manifest", "label": {"en": ["Volume 1"]}}, %s]}`, srv.URL, vols[0], testManifest(vols[1]))))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	const base = "https://example.org/pub/"
	r := runCLI(t, newEnv(api), srv.URL+"/volumes.json", "-o", out, "--vocabulary", "", "--book-out", "--book-base-url", base)
	if r.code != exitOK || strings.Contains(r.stderr, "no book written") || strings.Contains(r.stderr, "a manifest of the collection") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for k, v := range vols {
		stem := fmt.Sprintf("volumes_%d_en", k+1)
		manifest := filepath.Join(out, stem+".json")
		var m struct {
			ID    string `json:"id"`
			Items []struct {
				ID          string `json:"id"`
				Annotations []struct{ ID string }
				SeeAlso     []struct{ ID string }
			} `json:"items"`
		}
		if err := json.Unmarshal(readOrFatal(t, manifest), &m); err != nil {
			t.Fatal(err)
		}
		if m.ID != base+stem+".json" || len(m.Items) != 4 {
			t.Fatalf("manifest %d: id %s, %d canvases", k+1, m.ID, len(m.Items))
		}
		var pages []string
		for i, c := range m.Items[:2] { // the canvases with a text file translated
			want := fmt.Sprintf("%s%s_annotations/%d.json", base, stem, i+1)
			if c.ID != fmt.Sprintf("%s/iiif/canvas/%d", v, i+1) || len(c.Annotations) != 1 || c.Annotations[0].ID != want {
				t.Fatalf("manifest %d canvas %s: %+v, want %s", k+1, c.ID, c.Annotations, want)
			}
			if last := c.SeeAlso[len(c.SeeAlso)-1].ID; !strings.HasPrefix(last, base) || !strings.Contains(last, fmt.Sprintf("/v%d/iiif/text/", k+1)) {
				t.Errorf("manifest %d canvas %s: the translated file %s, want it under v%d/", k+1, c.ID, last, k+1)
			}
			path := filepath.Join(out, stem+"_annotations", fmt.Sprintf("%d.json", i+1))
			pages = append(pages, path)
			var page struct {
				Items []struct{ Target string } `json:"items"`
			}
			if err := json.Unmarshal(readOrFatal(t, path), &page); err != nil || len(page.Items) == 0 {
				t.Fatalf("%s: %v", path, err)
			}
			for _, a := range page.Items {
				if !strings.HasPrefix(a.Target, c.ID+"#xywh=") {
					t.Fatalf("%s: annotation on %s, want on %s", path, a.Target, c.ID)
				}
			}
		}
		t.Logf("iiif-prezi3, manifest %d: %s", k+1, bookouttest.Prezi3(t, manifest, pages...))
	}
	coll := filepath.Join(out, "volumes_en.json")
	var c struct {
		ID    string           `json:"id"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(readOrFatal(t, coll), &c); err != nil {
		t.Fatal(err)
	}
	if c.ID != base+"volumes_en.json" || len(c.Items) != 2 {
		t.Fatalf("derived collection: %+v", c)
	}
	for k, it := range c.Items {
		if it["id"] != fmt.Sprintf("%svolumes_%d_en.json", base, k+1) || it["items"] != nil || it["label"] == nil {
			t.Errorf("member %d: %v, want a reference to the derived manifest", k+1, it)
		}
	}
	t.Logf("iiif-prezi3, collection: %s", bookouttest.Prezi3Collection(t, coll))
}

// The METS note gives the mode each format of the book's translated files
// was written in (it gave the command's mode: "replace" for PAGE files
// written in append, PAGE's default when no mode is given).
func TestModesOf(t *testing.T) {
	files := func(fs ...book.Format) []bookFile {
		var out []bookFile
		for _, f := range fs {
			out = append(out, bookFile{text: book.Text{Format: f}})
		}
		return out
	}
	for _, c := range []struct {
		mode  alto.Mode
		files []bookFile
		want  string
	}{
		{"replace", files(book.ALTO, book.ALTO), "replace"},
		{"", files(book.PAGE), "append"}, // each format's default
		{"", files(book.ALTO, book.PAGE, book.ALTO), "replace (ALTO), append (PAGE)"},
		{"replace", files(book.ALTO, book.PAGE), "replace"},
		{"alternative", files(book.ALTO, book.PAGE), "alternative (ALTO), append (PAGE)"},
		{"", files(book.HOCR), "parallel"},
		{"append", files(book.ALTO, book.HOCR), "append (ALTO), parallel (hOCR)"},
	} {
		if got := modesOf(c.mode, c.files); got != c.want {
			t.Errorf("modesOf(%q, %d files) = %q, want %q", c.mode, len(c.files), got, c.want)
		}
	}
}

// TestBookOutIIIFLineLanguages: with the source language detected, each
// annotation says the language its line was translated from, as the file's
// log has it (a German page's lines en-t-de-t0-und, a Spanish page's
// en-t-es-t0-und), a line left as it was says its own language (the hOCR
// German page's English references: en), and each file's seeAlso label names the
// language most of its lines came from. Before, every annotation and label
// said the run's most frequent source language (a German page's lines
// "translated from Spanish").
func TestBookOutIIIFLineLanguages(t *testing.T) {
	const kantFile = "../../internal/translate/pagexml/testdata/real/ocrd-gt_german_kant1784-0017.page.xml"
	const transkribusFile = "../../internal/translate/pagexml/testdata/real/transkribus_spanish_170025120000003-0074.page.xml"
	srv := newBookServer(t)
	srv.put("/iiif/text/1.page.xml", readOrFatal(t, kantFile))
	srv.put("/iiif/text/2.page.xml", readOrFatal(t, transkribusFile))
	srv.put("/iiif/text/3.hocr", readOrFatal(t, "../../internal/translate/hocr/testdata/real/tesseract4_german_hocrjs-309515696-2.hocr"))
	canvas := func(n int, see string) string { return iiifCanvas(srv.URL, n, see) }
	srv.put("/iiif/book.json", []byte(fmt.Sprintf(`{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "%s/iiif/book.json", "type": "Manifest",
  "label": {"en": ["three languages"]}, "items": [%s, %s, %s]}`, srv.URL,
		canvas(1, `{"id": "`+srv.URL+`/iiif/text/1.page.xml", "type": "Dataset", "format": "application/vnd.prima.page+xml"}`),
		canvas(2, `{"id": "`+srv.URL+`/iiif/text/2.page.xml", "type": "Dataset", "format": "application/vnd.prima.page+xml"}`),
		canvas(3, `{"id": "`+srv.URL+`/iiif/text/3.hocr", "type": "Text", "format": "text/vnd.hocr+html"}`))))
	const base = "https://example.org/pub/"
	out := bookOutIIIF(t, srv, translatortest.Config{Pairs: []string{"de-en", "es-en", "la-en", "en-de"}}, "auto", base)
	var m struct {
		Items []struct {
			Annotations []struct{ ID string }
			SeeAlso     []struct{ Label map[string][]string }
		} `json:"items"`
	}
	if err := json.Unmarshal(readOrFatal(t, filepath.Join(out, "book_en.json")), &m); err != nil || len(m.Items) != 3 {
		t.Fatalf("derived manifest: %v, %+v", err, m)
	}
	for i, c := range []struct {
		main  string // the file's label and most of its translated lines
		other string // a language some of its lines must have ("" none)
	}{{"en-t-de-t0-und", ""}, {"en-t-es-t0-und", ""}, {"en-t-de-t0-und", "en"}} {
		it := m.Items[i]
		if len(it.Annotations) != 1 || len(it.SeeAlso) != 2 {
			t.Fatalf("canvas %d: %+v", i+1, it)
		}
		if l := it.SeeAlso[1].Label["none"]; len(l) != 1 || !strings.HasSuffix(l[0], "machine translation ("+c.main+")") {
			t.Errorf("canvas %d: seeAlso label %q, want %s", i+1, l, c.main)
		}
		var page struct {
			Items []struct{ Body struct{ Language string } }
		}
		if err := json.Unmarshal(readOrFatal(t, filepath.Join(out, filepath.FromSlash(strings.TrimPrefix(it.Annotations[0].ID, base)))), &page); err != nil {
			t.Fatal(err)
		}
		langs := map[string]int{}
		for _, a := range page.Items {
			langs[a.Body.Language]++
		}
		top := ""
		for l, n := range langs {
			if strings.Contains(l, "-t-") && (top == "" || n > langs[top]) {
				top = l
			}
		}
		if top != c.main || (c.other != "" && langs[c.other] == 0) {
			t.Errorf("canvas %d: annotation languages %v, want %s the most frequent translation (and some %q)", i+1, langs, c.main, c.other)
		}
	}
}

// TestBookOutMETSBlankPage: a METS book one of whose ALTO files holds no
// text keeps that page's file in the translated group (one file a page),
// and the group's agent note says it was copied as it was rather than
// calling every file a machine translation.
func TestBookOutMETSBlankPage(t *testing.T) {
	srv := altoBookServer(t, 3)
	srv.put("/b/ocr/0002.xml", []byte(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p2" WIDTH="800" HEIGHT="1000" PHYSICAL_IMG_NR="2"><PrintSpace/></Page></Layout></alto>
`))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), srv.URL+"/b/mets.xml", "-o", out, "--vocabulary", "", "--fast-align", "--book-out")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	mets, err := filepath.Glob(filepath.Join(out, "*_en.mets.xml"))
	if err != nil || len(mets) != 1 {
		all, _ := filepath.Glob(filepath.Join(out, "*"))
		t.Fatalf("written METS: %q, %v; output folder %q", mets, err, all)
	}
	got := string(readOrFatal(t, mets[0]))
	if n := strings.Count(got, `<mets:fptr FILEID="`); n != 9 {
		t.Errorf("%d file pointers, want 9 (three pages, each its image, its text and its translation):\n%s", n, got)
	}
	if !strings.Contains(got, "machine translation into en") || !strings.Contains(got, "; 1 of the 3 files are pages without text, copied as they were") {
		t.Errorf("the agent note does not say the blank page was copied:\n%s", got)
	}
}
