package imageio

import (
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
