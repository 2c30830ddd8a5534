package pdfium

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// library loads PDFium from ARCHIVEKIT_PDFIUM (make env sets it to the
// library of the pinned pypdfium2 wheel, make pdfium).
func library(t *testing.T) {
	t.Helper()
	path := os.Getenv("ARCHIVEKIT_PDFIUM")
	if path == "" {
		t.Skip("ARCHIVEKIT_PDFIUM is not set (eval \"$(make -s env)\" sets it)")
	}
	if err := Load(path); err != nil {
		t.Fatal(err)
	}
}

// pdf is a document of pages 200×100 points each with a black square
// (50 points from the left and bottom, 20 points wide), labelled by tree.
func pdf(pages int, tree string) []byte {
	var objs []string
	kids := ""
	objs = append(objs, "<< /Type /Catalog /Pages 2 0 R "+tree+" >>", "")
	for i := 0; i < pages; i++ {
		kids += fmt.Sprintf("%d 0 R ", 3+2*i)
		content := "0 0 0 rg 50 50 20 20 re f"
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents %d 0 R >>", 4+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids, pages)
	return pdfOf(objs)
}

// pdfOf is a PDF of the objects objs, numbered from 1, the first the
// catalog.
func pdfOf(objs []string) []byte {
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	x := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, x)
	return []byte(b.String())
}

func TestRender(t *testing.T) {
	library(t)
	base := LiveHandles()
	d, err := Open(pdf(2, "/PageLabels << /Nums [0 << /S /R /P (p-) >>] >>"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if n := d.Pages(); n != 2 {
		t.Fatalf("%d pages, want 2", n)
	}
	w, h, err := d.Size(1)
	if err != nil || w != 200 || h != 100 {
		t.Fatalf("size %v×%v (%v), want 200×100 points", w, h, err)
	}
	// At 144 dpi (2 pixels a point): the square covers x 100..140 and,
	// from the top, y 60..100.
	pix, free, err := d.Render(1, 400, 200)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	at := func(x, y int) [3]byte { i := (y*400 + x) * 3; return [3]byte{pix[i], pix[i+1], pix[i+2]} }
	if c := at(120, 80); c[0] > 40 || c[1] > 40 || c[2] > 40 {
		t.Errorf("inside the square %v, want black", c)
	}
	if c := at(10, 10); c != [3]byte{255, 255, 255} {
		t.Errorf("outside the square %v, want white", c)
	}
	if l0, l1 := d.Label(0), d.Label(1); l0 != "p-I" || l1 != "p-II" {
		t.Errorf("labels %q %q, want p-I p-II", l0, l1)
	}
	if _, _, err := d.Render(5, 10, 10); err == nil {
		t.Error("page 6 of 2 rendered")
	}
	d.Close()
	d.Close() // twice is harmless
	if n := LiveHandles() - base; n != 0 {
		t.Errorf("%d documents left open", n)
	}
}

func TestOpenRefusals(t *testing.T) {
	library(t)
	for name, data := range map[string][]byte{"empty": nil, "not a pdf": []byte("GIF89a........"), "truncated": pdf(1, "")[:40]} {
		if d, err := Open(data); err == nil {
			d.Close()
			t.Errorf("%s: opened", name)
		}
	}
	if err := Load("/nonexistent/libpdfium.so"); err != nil && Loaded() == "" {
		t.Errorf("a later Load after success: %v", err)
	}
}

// TestFormFields: a text field whose value has no appearance stream (a
// form filled by a program that leaves the drawing to the reader,
// NeedAppearances) is drawn, as a reader and poppler draw it; without the
// form layer PDFium drew the page blank.
func TestFormFields(t *testing.T) {
	library(t)
	if !Forms() {
		t.Fatal("the PDFium library of make pdfium has no form layer")
	}
	d, err := Open(pdfOf([]string{
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R] /NeedAppearances true /DA (/Helv 0 Tf 0 g) /DR << /Font << /Helv 5 0 R >> >> >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Annots [4 0 R] >>",
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (place) /V (HROB HROB) /Rect [10 30 190 70] /F 4 /P 3 0 R /DA (/Helv 24 Tf 0 g) >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pix, free, err := d.Render(0, 400, 200)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	dark := 0
	for i := 0; i < len(pix); i += 3 {
		if int(pix[i])+int(pix[i+1])+int(pix[i+2]) < 3*128 {
			dark++
		}
	}
	// The two words at 24 points cover a few thousand of the 80,000
	// pixels at 144 dpi.
	if dark < 500 {
		t.Errorf("%d dark pixels: the field's value was not drawn", dark)
	}
}
