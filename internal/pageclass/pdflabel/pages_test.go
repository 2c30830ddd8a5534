package pdflabel

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"
)

func TestPageObjects(t *testing.T) {
	const (
		catalog = "<< /Type /Catalog /Pages 2 0 R >>"
		page    = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
	)
	for _, tc := range []struct {
		name   string
		objs   []string
		count  int
		broken []int
		err    string
	}{
		{"intact", []string{catalog, "<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>", page, page, page}, 3, nil, ""},
		{"page 2's object missing", []string{catalog, "<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>", page, "", page}, 3, []int{2}, ""},
		{"page 2 not a dictionary", []string{catalog, "<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>", page, "[1 2 3]", page}, 3, []int{2}, ""},
		{"kid points to no object", []string{catalog, "<< /Type /Pages /Kids [3 0 R 99 0 R 5 0 R] /Count 3 >>", page, page, page}, 3, []int{2}, ""},
		{"kid not a reference", []string{catalog, "<< /Type /Pages /Kids [3 0 R 42 5 0 R] /Count 3 >>", page, page, page}, 3, []int{2}, ""},
		{"a page without /Type", []string{catalog, "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>", page, "<< /MediaBox [0 0 612 792] >>"}, 2, nil, ""},
		{"nested nodes, page 3 broken", []string{catalog, "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 4 >>",
			"<< /Type /Pages /Kids [5 0 R 6 0 R] /Count 2 >>", "<< /Type /Pages /Kids [7 0 R 8 0 R] /Count 2 >>", page, page, "", page}, 4, []int{3}, ""},
		{"a loop", []string{catalog, "<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>", page}, 0, nil, "refers to itself"},
		{"no page tree", []string{"<< /Type /Catalog >>"}, 0, nil, "no page tree"},
		{"a page in an object stream not decoded", []string{catalog, "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>", page,
			"", "<< /Type /ObjStm /N 1 /First 4 /Filter /LZWDecode /Length 3 >>\nstream\nxyz\nendstream"}, 0, nil, "could not be decoded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			count, broken, err := PageObjects(hostile.PDFObjects(tc.objs...))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if count != tc.count || !reflect.DeepEqual(broken, tc.broken) {
				t.Errorf("%d pages, broken %v; want %d, %v", count, broken, tc.count, tc.broken)
			}
		})
	}
}

// TestPageObjectsDeep: a page tree deeper than 32 levels is not followed.
func TestPageObjectsDeep(t *testing.T) {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>"}
	for i := 2; i < 40; i++ {
		objs = append(objs, "<< /Type /Pages /Kids ["+strconv.Itoa(i+1)+" 0 R] /Count 1 >>")
	}
	objs = append(objs, "<< /Type /Page >>")
	if _, _, err := PageObjects(hostile.PDFObjects(objs...)); err == nil || !strings.Contains(err.Error(), "deeper than 32") {
		t.Errorf("error %v, want one saying the tree is too deep", err)
	}
}
