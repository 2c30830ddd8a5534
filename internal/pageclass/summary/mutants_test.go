package summary_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"archivekit/internal/pageclass/summary"
)

// If broken: the summary of a run merged from its shards loses the pages
// one shard flagged, or the files kept from the ledger and left undone
// (so no "run again with --resume" is said).
func TestAddSumsEveryTotal(t *testing.T) {
	a := &summary.Summary{}
	a.Page("a.png", "TEXT_P", true, []string{"low_margin"})
	a.FilesKept, a.FilesLeft = 2, 1
	b := &summary.Summary{}
	b.Page("b.png", "DRAW_L", true, []string{"low_margin"})
	b.Page("c.png", "DRAW_L", false, nil)
	b.FilesKept, b.FilesLeft = 3, 4
	a.Add(b)
	if a.Pages != 3 || a.Flagged != 2 || a.FilesKept != 5 || a.FilesLeft != 5 || a.Reasons["low_margin"] != 2 {
		t.Errorf("merged %+v, want 3 pages, 2 flagged, 5 files kept, 5 left", a)
	}
	txt := a.Text()
	for _, want := range []string{"3 pages from 3 files classified, 2 flagged for review", "of them 5 files classified by earlier runs", "NOT FINISHED: 5 files left to do"} {
		if !strings.Contains(txt, want) {
			t.Errorf("summary text lacks %q:\n%s", want, txt)
		}
	}
}

// If broken: an unfinished run's SUMMARY.csv read back (to merge shards)
// says every file was done.
func TestTableRoundTripFilesLeft(t *testing.T) {
	s := &summary.Summary{}
	s.Page("a.png", "TEXT_P", true, []string{"low_margin"})
	s.Fail("b.pdf")
	s.FilesKept, s.FilesLeft = 1, 3
	path := filepath.Join(t.TempDir(), "x_"+summary.TableName)
	if err := s.WriteTable(path); err != nil {
		t.Fatal(err)
	}
	body, _ := os.ReadFile(path)
	if !strings.Contains(string(body), "total,files_left,3\n") {
		t.Errorf("table lacks the files_left row:\n%s", body)
	}
	got, err := summary.ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("read back %+v, wrote %+v", got, s)
	}
}

// If broken: a summary table with a negative count is read as if it were
// a count, and merged into the run's totals.
func TestReadTableRefusesNegativeCount(t *testing.T) {
	for _, body := range []string{"KIND,NAME,PAGES\ntotal,pages,-1\n", "KIND,NAME,PAGES\ncategory,TEXT_P,-2\n"} {
		path := filepath.Join(t.TempDir(), "s.csv")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := summary.ReadTable(path); err == nil || !strings.Contains(err.Error(), "row 2") {
			t.Errorf("%q: error %v, want row 2 refused", body, err)
		}
	}
}

// If broken: the terminal summary lists one file more than MaxListed by
// name before "... N more".
func TestTextListsMaxListedSources(t *testing.T) {
	s := &summary.Summary{}
	n := summary.MaxListed + 2
	for i := 0; i < n; i++ {
		for p := 0; p < n+1-i; p++ { // file i has n+1-i pages: f00 has most
			s.Page(fmt.Sprintf("f%02d.pdf", i), "TEXT_P", false, nil)
		}
	}
	txt := s.Text()
	listed := 0
	for i := 0; i < n; i++ {
		if strings.Contains(txt, fmt.Sprintf("f%02d.pdf", i)) {
			listed++
		}
	}
	if listed != summary.MaxListed || !strings.Contains(txt, "... 2 more") || strings.Contains(txt, fmt.Sprintf("f%02d.pdf", summary.MaxListed)) {
		t.Errorf("%d files listed, want the %d with most pages, then ... 2 more:\n%s", listed, summary.MaxListed, txt)
	}
}
