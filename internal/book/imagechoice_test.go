package book

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMETSImageBeforePDF: a page whose image group lists a PDF before its
// image takes the image, and says so (the PDF was taken as the page's
// image and the image dropped without a word); a page whose only file
// there is a PDF keeps it (pageclass reads PDFs).
func TestMETSImageBeforePDF(t *testing.T) {
	dir := t.TempDir()
	body := `<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
<mets:fileSec><mets:fileGrp USE="DEFAULT">
  <mets:file ID="PDF_1" MIMETYPE="application/pdf"><mets:FLocat LOCTYPE="URL" xlink:href="scan/1.pdf"/></mets:file>
  <mets:file ID="IMG_1" MIMETYPE="image/png"><mets:FLocat LOCTYPE="URL" xlink:href="scan/1.png"/></mets:file>
  <mets:file ID="PDF_2" MIMETYPE="application/pdf"><mets:FLocat LOCTYPE="URL" xlink:href="scan/2.pdf"/></mets:file>
</mets:fileGrp></mets:fileSec>
<mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence">
  <mets:div ID="P1" TYPE="page" ORDER="1"><mets:fptr FILEID="PDF_1"/><mets:fptr FILEID="IMG_1"/></mets:div>
  <mets:div ID="P2" TYPE="page" ORDER="2"><mets:fptr FILEID="PDF_2"/></mets:div>
</mets:div></mets:structMap></mets:mets>`
	b := readMETS(t, dir, body)
	if len(b.Pages) != 2 || b.Pages[0].Image == nil || b.Pages[0].Image.FileID != "IMG_1" || b.Pages[1].Image == nil || b.Pages[1].Image.FileID != "PDF_2" {
		t.Fatalf("pages %+v, want P1's image IMG_1 and P2's PDF_2", b.Pages)
	}
	said := false
	for _, p := range b.Problems {
		said = said || p.Page == "P1" && strings.Contains(p.Reason, "is no image") && strings.Contains(p.Reason, "IMG_1")
	}
	if !said {
		t.Errorf("problems %v: the PDF passed over is not said", b.Problems)
	}
}

// TestLocalHrefsAsURIReferences: a local METS whose hrefs are written as
// URI references (a name with a space percent-encoded, a query, as a copy
// of a server's METS has them) finds its files (it looked for
// "page%201.png" and "2.png?v=3", which do not exist); a file whose name
// holds "%" is found as written.
func TestLocalHrefsAsURIReferences(t *testing.T) {
	// the folder's own name holds "#", "%" and "?" (it was decoded too,
	// and nothing was found)
	dir := filepath.Join(t.TempDir(), "Box #12, 50% done?")
	for _, name := range []string{"page 1.png", "2.png", "100%.png"} {
		p := filepath.Join(dir, "img", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("png"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	body := `<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
<mets:fileSec><mets:fileGrp USE="DEFAULT">
  <mets:file ID="F1" MIMETYPE="image/png"><mets:FLocat LOCTYPE="URL" xlink:href="img/page%201.png"/></mets:file>
  <mets:file ID="F2" MIMETYPE="image/png"><mets:FLocat LOCTYPE="URL" xlink:href="img/2.png?v=3"/></mets:file>
  <mets:file ID="F3" MIMETYPE="image/png"><mets:FLocat LOCTYPE="URL" xlink:href="img/100%.png"/></mets:file>
</mets:fileGrp></mets:fileSec>
<mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence">
  <mets:div ID="P1" TYPE="page"><mets:fptr FILEID="F1"/></mets:div>
  <mets:div ID="P2" TYPE="page"><mets:fptr FILEID="F2"/></mets:div>
  <mets:div ID="P3" TYPE="page"><mets:fptr FILEID="F3"/></mets:div>
</mets:div></mets:structMap></mets:mets>`
	b := readMETS(t, dir, body)
	var got []string
	for _, p := range b.Pages {
		if p.Image == nil {
			t.Fatalf("page %s without an image", p.ID)
		}
		got = append(got, p.Image.Location)
	}
	want := []string{filepath.Join(dir, "img", "page 1.png"), filepath.Join(dir, "img", "2.png"), filepath.Join(dir, "img", "100%.png")}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("images %q, want %q", got, want)
	}
}

// TestMETSUntypedImageKept: an image-group file neither typed nor named
// (a server's URL without an extension) is the page's image, not replaced
// by a typed thumbnail after it, and nothing is said of it.
func TestMETSUntypedImageKept(t *testing.T) {
	dir := t.TempDir()
	body := `<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
<mets:fileSec><mets:fileGrp USE="DEFAULT">
  <mets:file ID="MASTER"><mets:FLocat LOCTYPE="URL" xlink:href="https://iiif.example.org/img/0001"/></mets:file>
  <mets:file ID="THUMB" MIMETYPE="image/jpeg"><mets:FLocat LOCTYPE="URL" xlink:href="https://iiif.example.org/thumb/0001.jpg"/></mets:file>
</mets:fileGrp></mets:fileSec>
<mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence">
  <mets:div ID="P1" TYPE="page" ORDER="1"><mets:fptr FILEID="MASTER"/><mets:fptr FILEID="THUMB"/></mets:div>
</mets:div></mets:structMap></mets:mets>`
	b := readMETS(t, dir, body)
	if len(b.Pages) != 1 || b.Pages[0].Image == nil || b.Pages[0].Image.FileID != "MASTER" {
		t.Fatalf("pages %+v, want P1's image MASTER", b.Pages)
	}
	for _, p := range b.Problems {
		if strings.Contains(p.Reason, "is no image") {
			t.Errorf("said of an untyped image: %v", p)
		}
	}
}

// readMETS reads the METS body written as mets.xml in dir.
func readMETS(t *testing.T, dir, body string) *Book {
	t.Helper()
	mets := filepath.Join(dir, "mets.xml")
	if err := os.WriteFile(mets, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Read(context.Background(), mets, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
