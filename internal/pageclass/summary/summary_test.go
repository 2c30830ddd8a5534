package summary

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sample() *Summary {
	s := &Summary{}
	s.Page("a/1878-01-03.png", "TEXT_P", false, nil)
	s.Page("scan-09.png", "DRAW_L", true, []string{"low_agreement", "low_margin"})
	s.Page("doc.tif", "TEXT_P", true, []string{"low_margin"})
	s.Page("doc.tif", "PHOTO_L", false, nil)
	s.Fail("broken.jpg")
	s.Left(map[string]int{".pdf": 2})
	s.FilesKept = 1
	return s
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestCountsAddUp(t *testing.T) {
	s := sample()
	if s.Pages != 4 || sum(s.Categories) != s.Pages || sum(s.Sources) != s.Pages {
		t.Errorf("pages %d, by category %d, by source %d", s.Pages, sum(s.Categories), sum(s.Sources))
	}
	if s.Flagged != 2 || s.Reasons["low_margin"] != 2 || s.Reasons["low_agreement"] != 1 {
		t.Errorf("flagged %d, reasons %v", s.Flagged, s.Reasons)
	}
	if s.Failed != 1 || s.Failures["broken.jpg"] != 1 || s.Sources["doc.tif"] != 2 {
		t.Errorf("failed %d %v, sources %v", s.Failed, s.Failures, s.Sources)
	}
}

func TestTableRoundTrip(t *testing.T) {
	s := sample()
	path := filepath.Join(t.TempDir(), "x_"+TableName)
	if err := s.WriteTable(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("read back %+v, wrote %+v", got, s)
	}
	got.Add(s)
	if got.Pages != 8 || got.Sources["doc.tif"] != 4 || got.Failed != 2 || got.NotCollected[".pdf"] != 4 {
		t.Errorf("added: %+v", got)
	}
}

func TestReadTableRefuses(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"other header", "FILE,PAGE\n"},
		{"bad count", "KIND,NAME,PAGES\ntotal,pages,x\n"},
		{"unknown kind", "KIND,NAME,PAGES\nother,a,1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.csv")
			if err := writeFile(path, tc.body); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadTable(path); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestText(t *testing.T) {
	txt := sample().Text()
	for _, want := range []string{"4 pages from 3 files classified, 2 flagged for review, 1 failed",
		"TEXT_P", "scan-09.png", "low_margin", "broken.jpg", ".pdf"} {
		if !strings.Contains(txt, want) {
			t.Errorf("summary text lacks %q:\n%s", want, txt)
		}
	}
	s := &Summary{}
	for i := 0; i < MaxListed+3; i++ {
		s.Page(strings.Repeat("f", i+1)+".png", "TEXT_P", false, nil)
	}
	// Files of one page each: no list of pages per file (it listed ten
	// names with 1 page each).
	if txt := s.Text(); strings.Contains(txt, "pages per file") {
		t.Errorf("pages per file listed for one-page files:\n%s", txt)
	}
	s.Page("f.png", "TEXT_P", false, nil)
	txt = s.Text()
	if !strings.Contains(txt, "... 3 more") || !strings.Contains(txt, "\n         2  f.png\n") {
		t.Errorf("long list not cut, or its counts not first:\n%s", txt)
	}
	s.FilesKept, s.FilesLeft = 3, 2
	txt = s.Text()
	if !strings.Contains(txt, "of them 3 files classified by earlier runs") || !strings.Contains(txt, "NOT FINISHED: 2 files left to do; run again with --resume") {
		t.Errorf("kept and left files not said:\n%s", txt)
	}
}

func TestFilledHasNoNilCounts(t *testing.T) {
	f := (&Summary{}).Filled()
	if f.Categories == nil || f.Sources == nil || f.Reasons == nil || f.Failures == nil || f.NotCollected != nil {
		t.Errorf("filled %+v", f)
	}
}

// The totals line counts in the singular when a count is 1: a book is one
// file of many pages ("194 pages from 1 file"; before, "1 files").
func TestTextCountsInTheSingular(t *testing.T) {
	for _, c := range []struct {
		pages, files int
		want         string
	}{
		{1, 1, "Summary: 1 page from 1 file classified"},
		{194, 1, "Summary: 194 pages from 1 file classified"},
		{2, 2, "Summary: 2 pages from 2 files classified"},
		{0, 0, "Summary: 0 pages from 0 files classified"},
	} {
		s := &Summary{}
		for i := 0; i < c.pages; i++ {
			s.Page(strings.Repeat("f", 1+i%max(c.files, 1))+".png", "TEXT_P", false, nil)
		}
		if txt := s.Text(); !strings.HasPrefix(txt, c.want+",") {
			t.Errorf("%d pages of %d files: %q, want it to start %q", c.pages, c.files, strings.SplitN(txt, "\n", 2)[0], c.want)
		}
	}
}
