package pdflabel

import (
	"errors"
	"fmt"

	"archivekit/internal/pageclass/pdfsyntax"
)

// maxTreeDepth bounds the levels of a page-label or page tree followed.
const maxTreeDepth = 32

// maxPages bounds the leaves of a page tree counted.
const maxPages = 1 << 20

// PageObjects walks the page tree of the PDF in data (ISO 32000-1, 7.7.3)
// from the catalog's /Pages, following /Kids in order, and returns its
// number of pages (leaves) and the 1-based numbers of those among them
// that are broken: a /Kids entry that is no indirect reference, or whose
// object is missing or is not a dictionary. A dictionary with /Kids is an
// intermediate node, any other one a page, as poppler tells them.
//
// Poppler skips a broken entry when it numbers the pages, so every page
// after it reaches a caller that loads pages by index under the number of
// the page before it, while the page count (the tree's /Count) still
// includes it. PDFium keeps each page at its place.
//
// An error says the tree cannot be followed: no catalog or no /Pages, an
// encrypted PDF, a loop, more than 32 levels, or a missing object that an
// object stream this package cannot decode may hold.
func PageObjects(data []byte) (count int, broken []int, err error) {
	f, err := Open(data)
	if err != nil {
		return 0, nil, err
	}
	return f.PageObjects()
}

// PageObjects is the package's PageObjects of f.
func (f *File) PageObjects() (count int, broken []int, err error) {
	w := &pageWalk{r: f.r, seen: map[int]bool{}}
	if err := f.walk(w); err != nil {
		return 0, nil, err
	}
	if len(w.broken) > 0 && f.r.lost > 0 {
		return 0, nil, fmt.Errorf("page %d's object is not found, and %d object streams could not be decoded", w.broken[0], f.r.lost)
	}
	return w.count, w.broken, nil
}

// pageWalk is the state of PageObjects' walk: the leaves so far, the
// broken ones, and the intermediate nodes met (for loops).
type pageWalk struct {
	r      *reader
	count  int
	broken []int
	seen   map[int]bool
	// page, when not nil, is called with each page that is not broken:
	// its number, its dictionary and its resources (its own /Resources,
	// else the nearest node's above it).
	page func(num int, d pdfsyntax.Dict, resources any)
}

// walk walks the tree from the catalog's /Pages.
func (f *File) walk(w *pageWalk) error {
	pages, ok := f.r.resolve(f.root["Pages"]).(pdfsyntax.Dict)
	if !ok {
		return errors.New("the catalog has no page tree (/Pages)")
	}
	if rf, ok := f.root["Pages"].(pdfsyntax.Ref); ok {
		w.seen[rf.Num] = true
	}
	return w.node(pages, 0, nil)
}

// node counts the leaves under the intermediate node n, at depth levels
// below the root, whose resources above it are res.
func (w *pageWalk) node(n pdfsyntax.Dict, depth int, res any) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("the page tree is deeper than %d levels", maxTreeDepth)
	}
	if r := n["Resources"]; r != nil {
		res = r
	}
	kids, _ := w.r.resolve(n["Kids"]).(pdfsyntax.Array)
	for _, k := range kids {
		if w.count >= maxPages {
			return fmt.Errorf("the page tree has more than %d pages", maxPages)
		}
		rf, isRef := k.(pdfsyntax.Ref)
		kid, isDict := w.r.resolve(k).(pdfsyntax.Dict)
		if !isRef || !isDict {
			w.count++
			w.broken = append(w.broken, w.count)
			continue
		}
		if kid["Type"] == pdfsyntax.Name("Page") || kid["Kids"] == nil {
			w.count++
			if w.page != nil {
				r := res
				if kid["Resources"] != nil {
					r = kid["Resources"]
				}
				w.page(w.count, kid, r)
			}
			continue
		}
		if w.seen[rf.Num] {
			return errors.New("the page tree refers to itself")
		}
		w.seen[rf.Num] = true
		if err := w.node(kid, depth+1, res); err != nil {
			return err
		}
	}
	return nil
}
