package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"archivekit/internal/bookout"
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
	got := readOrFatal(t, filepath.Join(out, "mets_en.mets.xml"))
	if !bytes.Contains(got, []byte(`<mets:fileGrp USE="OCR-D-MT-EN">`)) || bytes.Count(got, []byte(`<mets:fptr FILEID="OCR-D-MT-EN_`)) != 4 {
		t.Fatalf("new METS:\n%s", got)
	}
	hrefs := regexp.MustCompile(`xlink:href="(OCR-D-GT-[^"]*_en\.[a-z.]*xml)"`).FindAllSubmatch(got, -1)
	if len(hrefs) != 4 {
		t.Errorf("%d FLocats of translations, want 4:\n%s", len(hrefs), got)
	}
	for _, m := range hrefs {
		if _, err := os.Stat(filepath.Join(out, string(m[1]))); err != nil {
			t.Errorf("FLocat %s: %v", m[1], err)
		}
	}
	back, err := bookout.RemoveFromMETS(got, "OCR-D-MT-EN")
	if err != nil || !bytes.Equal(back, readOrFatal(t, filepath.Join(in, "mets.xml"))) {
		t.Errorf("removing the added parts does not give the input back (%v)", err)
	}
}
