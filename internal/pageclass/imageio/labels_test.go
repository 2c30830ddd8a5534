package imageio

import (
	"strings"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"
)

// TestPDFLabels: a PDF's page labels are read with its pages; a PDF
// without them, and an image, have none.
func TestPDFLabels(t *testing.T) {
	page := "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 300] >>"
	labelled := hostile.PDFObjects("<< /Type /Catalog /Pages 2 0 R /PageLabels << /Nums [0 << /S /r >> 1 << /S /D /St 7 >>] >> >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>", page, page)
	plain := hostile.PDFObjects("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page)
	for name, tc := range map[string]struct {
		data []byte
		want []string
	}{
		"labelled": {labelled, []string{"i", "7"}},
		"plain":    {plain, []string{""}},
	} {
		d, err := Decode(tc.data, name+".pdf")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Pages() != len(tc.want) {
			t.Fatalf("%s: %d pages", name, d.Pages())
		}
		for i, w := range tc.want {
			if got := d.Label(i); got != w {
				t.Errorf("%s page %d: label %q, want %q", name, i+1, got, w)
			}
		}
		if d.LabelError() != nil {
			t.Errorf("%s: %v", name, d.LabelError())
		}
	}
}

// TestPDFLabelErrorReported: a PDF whose page-label tree cannot be read
// is still opened, its pages numbered only, and Options.OnLabelError is
// told its name and why; a PDF with readable labels or none is not
// reported.
func TestPDFLabelErrorReported(t *testing.T) {
	page := "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 300] >>"
	broken := hostile.PDFObjects("<< /Type /Catalog /Pages 2 0 R /PageLabels << /Nums [(x) << /S /r >>] >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page)
	labelled := hostile.PDFObjects("<< /Type /Catalog /Pages 2 0 R /PageLabels << /Nums [0 << /S /r >>] >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page)
	plain := hostile.PDFObjects("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page)
	for _, tc := range []struct {
		name string
		data []byte
		want string // in the reported error; "" for no report
	}{
		{"broken.pdf", broken, "not a page index"},
		{"labelled.pdf", labelled, ""},
		{"plain.pdf", plain, ""},
	} {
		var names []string
		var errs []error
		o := DefaultOptions
		o.OnLabelError = func(name string, err error) { names, errs = append(names, name), append(errs, err) }
		d, err := o.Decode(tc.data, tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		switch {
		case tc.want == "" && len(names) > 0:
			t.Errorf("%s: reported %v %v", tc.name, names, errs)
		case tc.want != "" && (len(names) != 1 || names[0] != tc.name || !strings.Contains(errs[0].Error(), tc.want) || d.Label(0) != "" || d.LabelError() == nil):
			t.Errorf("%s: reported %v %v, label %q; want one report naming it, saying %q", tc.name, names, errs, d.Label(0), tc.want)
		}
	}
}

// TestEncryptedPDFLabels: an encrypted PDF's page labels (its strings
// encrypted, which pdflabel does not read) are read with PDFium, which
// decrypts a document whose user password is empty; its pages render.
// testdata/encrypted-labels.pdf was made with pypdf 7.1.1: four blank
// pages, labels i, ii, then A-1, A-2 (set_page_label), encrypted with
// AES-128, an empty user password and an owner password.
func TestEncryptedPDFLabels(t *testing.T) {
	loadPDFium(t)
	data := readTestdata(t, "encrypted-labels.pdf")
	d, err := Decode(data, "encrypted-labels.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if d.Pages() != 4 || d.LabelError() != nil {
		t.Fatalf("%d pages, label error %v", d.Pages(), d.LabelError())
	}
	for i, want := range []string{"i", "ii", "A-1", "A-2"} {
		if got := d.Label(i); got != want {
			t.Errorf("page %d: label %q, want %q", i+1, got, want)
		}
	}
	if img, err := d.Page(3); err != nil || img.W == 0 {
		t.Errorf("page 4: %d×%d, %v", img.W, img.H, err)
	}
}
