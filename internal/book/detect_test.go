package book

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Looks tells every METS file and IIIF manifest or collection of testdata
// from the text files beside them and from other XML and JSON.
func TestLooks(t *testing.T) {
	var books, others int
	err := filepath.Walk("testdata", func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || filepath.Ext(p) == ".md" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		// the books: the manifests and collections, and the METS files
		// (not the ALTO and PAGE files of their pages)
		dir := filepath.Base(filepath.Dir(p))
		isBook := strings.HasPrefix(p, filepath.Join("testdata", "iiif")) ||
			strings.HasPrefix(p, filepath.Join("testdata", "mets")) && dir != "ALTO" && !strings.HasPrefix(dir, "OCR-D-GT-")
		if got := Looks(data); got != isBook {
			t.Errorf("%s: Looks %v, want %v", p, got, isBook)
		}
		if isBook {
			books++
		} else {
			others++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if books < 20 || others < 8 {
		t.Errorf("%d books and %d other files in testdata", books, others)
	}
	for _, s := range []string{"", "   ", "<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\"/>", `{"a": 1}`, "%PDF-1.4", "\xef\xbb\xbf<mets:mets xmlns:mets=\"http://www.loc.gov/METS/\">"} {
		want := s != "" && s[0] == '\xef'
		if got := Looks([]byte(s)); got != want {
			t.Errorf("Looks(%q) = %v, want %v", s, got, want)
		}
	}
}
