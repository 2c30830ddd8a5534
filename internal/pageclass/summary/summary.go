// Package summary counts what a classification run found: pages per
// category, per source file and in total, pages flagged for review and why,
// failures, and the readable files a folder run did not collect. The same
// counts are written three ways: a short text block for a terminal (Text),
// the run metadata (the Summary value as JSON) and a small table,
// {stamp}_SUMMARY.csv (WriteTable), which ReadTable reads back and Add sums
// (the shards of one run merge by adding their counts).
package summary

import (
	"archivekit/internal/utf8name"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"archivekit/internal/atomicfile"
	"archivekit/internal/pageclass/results"
)

// TableName ends the name of a run's summary table, {stamp}_SUMMARY.csv.
const TableName = "SUMMARY.csv"

// Kinds of the table's rows (its KIND column).
const (
	KindTotal    = "total"    // NAME pages|flagged|failed|sources, and files_kept|files_left when not 0
	KindCategory = "category" // NAME a category: pages whose first class it is
	KindSource   = "source"   // NAME an input relative to the input folder: its pages classified
	KindFlagged  = "flagged"  // NAME a review reason: pages it flags
	KindFailed   = "failed"   // NAME an input: its failures (pages, or 1 for the whole file)
	KindLeft     = "not_collected"
)

// Header is the summary table's header: KIND, NAME, PAGES.
var Header = []string{"KIND", "NAME", "PAGES"}

// Summary is the counts of one run. The zero value is empty and ready.
type Summary struct {
	// Pages is the number of pages classified (rows of the main table);
	// Flagged those flagged for review; Failed the failures (a page, or a
	// file that could not be read at all).
	Pages   int `json:"pages"`
	Flagged int `json:"flagged"`
	Failed  int `json:"failed"`
	// Categories counts the pages by their first class.
	Categories map[string]int `json:"categories"`
	// Sources counts the pages classified per input file, by its path
	// relative to the input folder as on disk.
	Sources map[string]int `json:"sources"`
	// Reasons counts the flagged pages by review reason (a page may have
	// several).
	Reasons map[string]int `json:"flag_reasons"`
	// Failures counts the failures per input file.
	Failures map[string]int `json:"failures"`
	// NotCollected counts, by extension, the files of the input folder a
	// decoder reads but that the run's -ff did not take.
	NotCollected map[string]int `json:"not_collected,omitempty"`
	// FilesKept counts the files whose rows a resumed run took from the
	// ledger (classified by earlier runs; their pages are in the counts
	// above); FilesLeft the files this run did not finish (it was
	// interrupted, or a page failed in passing): a --resume does them.
	FilesKept int `json:"files_kept,omitempty"`
	FilesLeft int `json:"files_left,omitempty"`
}

func inc(m *map[string]int, k string, n int) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k] += n
}

// Page counts one classified page of source, its first class, whether it is
// flagged and the reasons.
func (s *Summary) Page(source, category string, flagged bool, reasons []string) {
	s.Pages++
	inc(&s.Categories, category, 1)
	inc(&s.Sources, utf8name.Escape(source), 1)
	if flagged {
		s.Flagged++
		for _, r := range reasons {
			inc(&s.Reasons, r, 1)
		}
	}
}

// Fail counts one failure of source.
func (s *Summary) Fail(source string) {
	s.Failed++
	inc(&s.Failures, utf8name.Escape(source), 1)
}

// Left records the readable files not collected, by extension.
func (s *Summary) Left(byExt map[string]int) {
	for e, n := range byExt {
		inc(&s.NotCollected, e, n)
	}
}

// Filled is a copy of s whose maps are never nil, so that the run metadata
// shows an empty count as {} rather than null.
func (s *Summary) Filled() *Summary {
	c := *s
	for _, m := range []*map[string]int{&c.Categories, &c.Sources, &c.Reasons, &c.Failures} {
		if *m == nil {
			*m = map[string]int{}
		}
	}
	return &c
}

// Add adds o's counts to s.
func (s *Summary) Add(o *Summary) {
	s.Pages += o.Pages
	s.Flagged += o.Flagged
	s.Failed += o.Failed
	s.FilesKept += o.FilesKept
	s.FilesLeft += o.FilesLeft
	for _, p := range []struct{ to, from *map[string]int }{
		{&s.Categories, &o.Categories}, {&s.Sources, &o.Sources}, {&s.Reasons, &o.Reasons},
		{&s.Failures, &o.Failures}, {&s.NotCollected, &o.NotCollected},
	} {
		for k, n := range *p.from {
			inc(p.to, k, n)
		}
	}
}

// byCount returns m's keys, most first, then by name.
func byCount(m map[string]int) []string {
	keys := slices.Sorted(maps.Keys(m))
	sort.SliceStable(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// MaxListed is how many source files and failures Text lists by name; the
// table holds them all.
const MaxListed = 10

// Text is the summary as a short block for a person at a terminal: totals,
// pages per category, per source file when a file has more than one page
// (the MaxListed with most pages when there are more), flag reasons,
// failures and files not collected; each line a count, then its name, so
// the counts line up whatever the names' lengths.
func (s *Summary) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Summary: %s from %s classified, %d flagged for review, %d failed\n",
		count(s.Pages, "page"), count(len(s.Sources), "file"), s.Flagged, s.Failed)
	if s.FilesKept > 0 {
		fmt.Fprintf(&b, "  of them %s classified by earlier runs (kept from the ledger)\n", count(s.FilesKept, "file"))
	}
	if s.FilesLeft > 0 {
		fmt.Fprintf(&b, "  NOT FINISHED: %s left to do; run again with --resume to classify them\n", count(s.FilesLeft, "file"))
	}
	list := func(title string, m map[string]int, limit int, unit string) {
		if len(m) == 0 {
			return
		}
		fmt.Fprintf(&b, "  %s:\n", title)
		keys := byCount(m)
		for i, k := range keys {
			if limit > 0 && i == limit {
				fmt.Fprintf(&b, "    ... %d more (see the %s table)\n", len(keys)-limit, TableName)
				break
			}
			u := unit
			if m[k] == 1 {
				u = strings.TrimSuffix(unit, "s") // " file", not " files"
			}
			fmt.Fprintf(&b, "    %6d%s  %s\n", m[k], u, k)
		}
	}
	list("pages per category", s.Categories, 0, "")
	if slices.ContainsFunc(slices.Collect(maps.Values(s.Sources)), func(n int) bool { return n > 1 }) {
		// Only where a file has several pages (a PDF, a TIFF, a book):
		// a list of images of one page each says nothing.
		list("pages per file", s.Sources, MaxListed, "")
	}
	list("flagged for review, by reason", s.Reasons, 0, "")
	list("failures, by file (reasons in the FAILURES table)", s.Failures, MaxListed, "")
	list("files not collected (-ff, --inner, or formats not read)", s.NotCollected, 0, " files")
	return b.String()
}

// count is n and noun, plural unless n is 1 ("1 file", "0 pages").
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Records are the table's rows after its header: the totals, then each
// kind's names in order.
func (s *Summary) Records() [][]string {
	recs := [][]string{
		{KindTotal, "pages", strconv.Itoa(s.Pages)},
		{KindTotal, "sources", strconv.Itoa(len(s.Sources))},
		{KindTotal, "flagged", strconv.Itoa(s.Flagged)},
		{KindTotal, "failed", strconv.Itoa(s.Failed)},
	}
	// Rows only a resumed or unfinished run has.
	if s.FilesKept > 0 {
		recs = append(recs, []string{KindTotal, "files_kept", strconv.Itoa(s.FilesKept)})
	}
	if s.FilesLeft > 0 {
		recs = append(recs, []string{KindTotal, "files_left", strconv.Itoa(s.FilesLeft)})
	}
	for _, k := range []struct {
		kind string
		m    map[string]int
	}{{KindCategory, s.Categories}, {KindSource, s.Sources}, {KindFlagged, s.Reasons}, {KindFailed, s.Failures}, {KindLeft, s.NotCollected}} {
		for _, n := range slices.Sorted(maps.Keys(k.m)) {
			recs = append(recs, []string{k.kind, n, strconv.Itoa(k.m[n])})
		}
	}
	return recs
}

// WriteTable writes the summary table to path atomically.
func (s *Summary) WriteTable(path string) error {
	return atomicfile.Write(path, 0o666, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(Header)
		cw.WriteAll(s.Records())
		return cw.Error()
	})
}

// ReadTable reads a summary table written by WriteTable.
func ReadTable(path string) (*Summary, error) {
	recs, err := results.ReadTable(path)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(Header, ",") {
		return nil, fmt.Errorf("%s: not a summary table (want the header %s)", path, strings.Join(Header, ","))
	}
	s := &Summary{}
	for i, r := range recs[1:] {
		n, err := strconv.Atoi(r[2])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: row %d: PAGES %q is not a count", path, i+2, r[2])
		}
		switch r[0] {
		case KindTotal:
			switch r[1] {
			case "pages":
				s.Pages = n
			case "flagged":
				s.Flagged = n
			case "failed":
				s.Failed = n
			case "files_kept":
				s.FilesKept = n
			case "files_left":
				s.FilesLeft = n
			}
		case KindCategory:
			inc(&s.Categories, r[1], n)
		case KindSource:
			inc(&s.Sources, r[1], n)
		case KindFlagged:
			inc(&s.Reasons, r[1], n)
		case KindFailed:
			inc(&s.Failures, r[1], n)
		case KindLeft:
			inc(&s.NotCollected, r[1], n)
		default:
			return nil, fmt.Errorf("%s: row %d: unknown KIND %q", path, i+2, r[0])
		}
	}
	return s, nil
}
