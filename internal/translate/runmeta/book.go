package runmeta

import (
	"cmp"
	"fmt"
	"maps"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/translator"
)

// Book is the one statistics record of a book (statistics.books, one a
// book of the run): its text files translated as one document.
type Book struct {
	// Source is the book (METS file or manifest, path or URL).
	Source string `json:"source"`
	// DocumentLanguage is the book's language, detected over all its text
	// files of this run in page order (translator.BookLanguage): the
	// document rule of every file's source-language order. "" with an
	// explicit source language, or when it could not be told.
	DocumentLanguage string `json:"document_language"`
	// DeclaredLanguage is the language the book's descriptive metadata
	// declares (METS MODS languageTerm; translator.DeclaredLanguage): the
	// document language when none was detected.
	DeclaredLanguage string `json:"declared_language,omitempty"`
	// TextFilesRead counts the files it was detected over.
	TextFilesRead int `json:"text_files_read"`
	// Files counts the text files translated in this run; Pages the pages
	// those files hold (a METS page whose PAGE and ALTO files are both
	// translated counts two; the book's own page count is config.book's
	// pages).
	Files           int            `json:"files"`
	Pages           int            `json:"pages"`
	Units           int            `json:"units"`
	UnitsTranslated int            `json:"units_translated"`
	UnitsSkipped    int            `json:"units_skipped"`
	BackendCalls    int            `json:"backend_calls"`
	Languages       map[string]int `json:"source_languages"`
	LangSources     map[string]int `json:"lang_sources"`
	SegmentStatus   map[string]int `json:"segment_status"`
	// Terminology is the vocabulary check over the whole book; null
	// without one.
	Terminology *TermRate `json:"terminology"`
	// Problems are what the book reader left out or found not matching
	// (book.Problem, as text): a page's file without a location, a text
	// file no page lists, ...; at most MaxProblems, the last then saying
	// how many more there were.
	Problems []string `json:"problems,omitempty"`
}

// MaxProblems bounds Book.Problems.
const MaxProblems = 100

// SetProblems records problems (as text), at most MaxProblems of them.
func (b *Book) SetProblems(problems []string) {
	if len(problems) > MaxProblems {
		problems = append(problems[:MaxProblems-1:MaxProblems-1], fmt.Sprintf("and %d more", len(problems)-MaxProblems+1))
	}
	b.Problems = problems
}

// NewBook is the empty record of the book at source.
func NewBook(source string) *Book {
	return &Book{Source: source, Languages: map[string]int{}, LangSources: map[string]int{}, SegmentStatus: map[string]int{}}
}

// Detect fills the record's languages for a run whose source language is
// source: with "auto", DocumentLanguage detected over texts (the units'
// texts of the book's text files read, UnitTexts of each in page order;
// files counts them, TextFilesRead) with order's confidence
// (translator.BookLanguage, recorded in usage; nil: not recorded), and
// DeclaredLanguage, the first of declared (the METS MODS languageTerms)
// that names a language; with another source, nothing. It returns the
// document language each of the book's files is translated with (the
// document rule of the source-language order): the detected one, else the
// declared one; "" with an explicit source.
func (b *Book) Detect(source string, texts []string, files int, declared []string, order alto.LangOrder, usage *translator.Usage) string {
	if source != "auto" {
		return ""
	}
	b.TextFilesRead = files
	b.DocumentLanguage = translator.BookLanguage(texts, nil, order, usage)
	b.DeclaredLanguage = translator.DeclaredLanguage(declared)
	return b.Language()
}

// Language is the document language the book's files are translated
// with: the detected one, else (not detected) the declared one.
func (b *Book) Language() string {
	return cmp.Or(b.DocumentLanguage, b.DeclaredLanguage)
}

// Add counts one translated text file of the book (ItemOf its output).
func (b *Book) Add(it Item) { b.add(it, 1) }

// add counts files text files whose statistics are it.
func (b *Book) add(it Item, files int) {
	b.Files += files
	b.Pages += it.Stats.Pages
	b.Units += it.Stats.Units
	b.UnitsTranslated += it.Stats.Translated
	b.UnitsSkipped += it.Stats.Skipped
	b.BackendCalls += it.Stats.Calls
	AddCounts(b.Languages, it.Languages)
	AddCounts(b.LangSources, it.LangSources)
	AddCounts(b.SegmentStatus, it.Statuses)
	if it.Terms != nil {
		b.addTerms(it.Terms.Expected, it.Terms.Hit)
	}
}

func (b *Book) addTerms(expected, hit int) {
	var t TermRate
	if b.Terminology != nil {
		t = *b.Terminology
	}
	t = NewTermRate(t.Expected+expected, t.Hit+hit)
	b.Terminology = &t
}

// merge adds the record of another share of the same book (--merge).
func (b *Book) merge(o *Book) {
	b.TextFilesRead += o.TextFilesRead
	b.Files += o.Files
	b.Pages += o.Pages
	b.Units += o.Units
	b.UnitsTranslated += o.UnitsTranslated
	b.UnitsSkipped += o.UnitsSkipped
	b.BackendCalls += o.BackendCalls
	AddCounts(b.Languages, o.Languages)
	AddCounts(b.LangSources, o.LangSources)
	AddCounts(b.SegmentStatus, o.SegmentStatus)
	if o.Terminology != nil {
		b.addTerms(o.Terminology.Expected, o.Terminology.Hit)
	}
	if b.DocumentLanguage != o.DocumentLanguage {
		b.DocumentLanguage = "" // the shares told different languages
	}
}

// clone is a copy sharing no map with b (nil for nil).
func (b *Book) clone() *Book {
	if b == nil {
		return nil
	}
	c := *b
	c.Languages, c.LangSources, c.SegmentStatus = maps.Clone(b.Languages), maps.Clone(b.LangSources), maps.Clone(b.SegmentStatus)
	if b.Terminology != nil {
		t := *b.Terminology
		c.Terminology = &t
	}
	return &c
}

// MergeBooks adds the book records of a shard run to those merged so far
// (into, whose records it changes): a book's shares (same source) make one
// record. The records of from are not changed.
func MergeBooks(into, from []*Book) []*Book {
outer:
	for _, b := range from {
		for _, m := range into {
			if m.Source == b.Source {
				m.merge(b)
				continue outer
			}
		}
		into = append(into, b.clone())
	}
	return into
}

func cloneBooks(bs []*Book) []*Book {
	if bs == nil {
		return nil
	}
	out := make([]*Book, len(bs))
	for i, b := range bs {
		out[i] = b.clone()
	}
	return out
}
