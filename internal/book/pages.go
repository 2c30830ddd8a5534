package book

import (
	"fmt"
	"path"
	"strings"
)

// Selection is a parsed page selection (see ParsePages). A nil Selection
// selects every page.
type Selection struct {
	include, exclude []term
}

// term is one item of a selection: an ID, a glob, or a range of IDs.
type term struct {
	from, to string // to != "": a range from..to
	glob     bool
}

// ParsePages parses OCR-D's page selection syntax: a comma-separated list
// of page IDs (PHYS_0001), globs (PHYS_00*), ranges of the book's order
// (PHYS_0001..PHYS_0005, both ends included), each one negated by a
// leading ~ (~PHYS_0003). Pages matching a negated item are left out; when
// there is an item that is not negated, only the pages it matches are
// kept. The empty string selects every page.
func ParsePages(s string) (*Selection, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	sel := &Selection{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		neg := strings.HasPrefix(item, "~")
		item = strings.TrimSpace(strings.TrimPrefix(item, "~"))
		if item == "" {
			return nil, fmt.Errorf("page selection %q: an empty item", s)
		}
		var t term
		if from, to, ok := strings.Cut(item, ".."); ok {
			if from == "" || to == "" || strings.Contains(to, "..") {
				return nil, fmt.Errorf("page selection %q: %q is not a range FIRST..LAST", s, item)
			}
			t = term{from: from, to: to}
		} else {
			if _, err := path.Match(item, ""); err != nil {
				return nil, fmt.Errorf("page selection %q: %q: %v", s, item, err)
			}
			t = term{from: item, glob: strings.ContainsAny(item, "*?[")}
		}
		if neg {
			sel.exclude = append(sel.exclude, t)
		} else {
			sel.include = append(sel.include, t)
		}
	}
	return sel, nil
}

// Apply returns the indexes of ids (in the book's physical order) that the
// selection keeps. A range whose ends are not both among ids is an error,
// as is a non-negated ID that matches no page.
func (s *Selection) Apply(ids []string) ([]int, error) {
	if s == nil {
		out := make([]int, len(ids))
		for i := range ids {
			out[i] = i
		}
		return out, nil
	}
	pos := map[string]int{}
	for i, id := range ids {
		if _, dup := pos[id]; !dup {
			pos[id] = i
		}
	}
	match := func(t term) (func(int) bool, error) {
		if t.to != "" {
			a, okA := pos[t.from]
			b, okB := pos[t.to]
			if !okA || !okB {
				return nil, fmt.Errorf("page range %s..%s: no page %s", t.from, t.to, map[bool]string{true: t.to, false: t.from}[okA])
			}
			if a > b {
				a, b = b, a
			}
			return func(i int) bool { return i >= a && i <= b }, nil
		}
		if t.glob {
			return func(i int) bool { ok, _ := path.Match(t.from, ids[i]); return ok }, nil
		}
		return func(i int) bool { return ids[i] == t.from }, nil
	}
	var inc, exc []func(int) bool
	for _, t := range s.include {
		m, err := match(t)
		if err != nil {
			return nil, err
		}
		if !t.glob && t.to == "" {
			if _, ok := pos[t.from]; !ok {
				return nil, fmt.Errorf("page selection: no page %s", t.from)
			}
		}
		inc = append(inc, m)
	}
	for _, t := range s.exclude {
		m, err := match(t)
		if err != nil {
			return nil, err
		}
		exc = append(exc, m)
	}
	any := func(fs []func(int) bool, i int) bool {
		for _, f := range fs {
			if f(i) {
				return true
			}
		}
		return false
	}
	var out []int
	for i := range ids {
		if (len(inc) == 0 || any(inc, i)) && !any(exc, i) {
			out = append(out, i)
		}
	}
	return out, nil
}

// SelectionWithoutBook is the error of a run given flags that select a
// book's pages (given: their names, as typed, in order) when none of its
// inputs is a book: a single page file given them was worked on whole
// without a word. verb says what the run does with every file
// ("translate", "classify"). nil when no such flag was given.
func SelectionWithoutBook(given []string, verb string) error {
	if len(given) == 0 {
		return nil
	}
	flags := strings.Join(given, " and ")
	return fmt.Errorf("%s selects pages of a METS file or IIIF manifest, and no input of this run is one; give the book itself, or leave %s out to %s every file",
		flags, flags, verb)
}
