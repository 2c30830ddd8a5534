// Package glossary says what the 11 page categories mean: one line each and
// one sample page that shows it. It is the one copy the tools show
// (pageclass --help, pageclass-api's /info and its browser page's legend);
// docs/glossary.md holds the same table for people (a test keeps the two
// equal).
package glossary

// Entry is one category in words.
type Entry struct {
	Category string `json:"category"`
	// Description is what a page of the category holds.
	Description string `json:"description"`
	// Example is a sample page of the category in the shared data
	// (data/pages/<Example>), and ExampleNote what it shows.
	Example     string `json:"example"`
	ExampleNote string `json:"example_note"`
}

// Document is the glossary for people: docs/glossary.md in the repository,
// share/doc/archivekit/docs/glossary.md in an installed tree.
const Document = "docs/glossary.md"

// Installed is where Document is in an installed tree (make install, the
// release tarball), relative to the tree's root.
const Installed = "share/doc/archivekit/" + Document

// Entries are the 11 categories in canonical order (modelmeta.Categories).
var Entries = []Entry{
	{"DRAW", "drawings, maps, plans, diagrams or other graphics (logos too), possibly with text labels or captions", "DRAW/atrium-34.png", "a page of project logos"},
	{"DRAW_L", "a drawing laid out with a table: a technical drawing with its title block, a plan with a tabular legend", "DRAW_L/pages_online_39.png", "a blueprint with a title block"},
	{"LINE_HW", "handwritten text in a table or form", "LINE_HW/pages_online_24.png", "a handwritten ledger table"},
	{"LINE_P", "printed text in a table, list or form", "LINE_P/atrium-02.png", "a printed table of document information"},
	{"LINE_T", "typed text in a table or form", "LINE_T/presentation_thesis_18.png", "a typed table of page counts"},
	{"PHOTO", "photographs or photographic cut-outs, possibly with captions", "PHOTO/caa_conference-15.png", "a page of object photographs"},
	{"PHOTO_L", "photographs laid out with tables, forms or other page images", "PHOTO_L/caa_conference-08.png", "a collage of scanned pages and photographs"},
	{"TEXT", "running text of mixed kinds (printed with handwritten or typed, text with small graphics)", "TEXT/caa_conference-04.png", "a slide of mixed text and logos"},
	{"TEXT_HW", "handwritten running text only", "TEXT_HW/pages_online_14.png", "a handwritten letter page"},
	{"TEXT_P", "printed running text only", "TEXT_P/atrium-22.png", "a printed report page"},
	{"TEXT_T", "typewritten running text only", "TEXT_T/pages_online_11.png", "a typewritten page"},
}

// Describe is the description of category c, "" for a name that is not a
// category.
func Describe(c string) string {
	for _, e := range Entries {
		if e.Category == c {
			return e.Description
		}
	}
	return ""
}
