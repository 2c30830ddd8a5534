package main

import (
	"maps"

	"archivekit/internal/regularfile"
	"archivekit/internal/translate/translator"
)

// bookStats is the one statistics record of a book (statistics.books,
// one a book of the run): its text files translated as one document.
type bookStats struct {
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
	// Files counts the text files translated in this run.
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
	Terminology *termRate `json:"terminology"`
}

func newBookStats(source string) *bookStats {
	return &bookStats{Source: source, Languages: map[string]int{}, LangSources: map[string]int{}, SegmentStatus: map[string]int{}}
}

// add counts one translated text file of the book.
func (b *bookStats) add(out *translator.Output) {
	b.Files++
	b.Pages += out.Stats.Pages
	b.Units += out.Stats.Units
	b.UnitsTranslated += out.Stats.Translated
	b.UnitsSkipped += out.Stats.Skipped
	b.BackendCalls += out.Stats.Calls
	addCounts(b.Languages, out.Languages)
	addCounts(b.LangSources, out.LangSources)
	addCounts(b.SegmentStatus, out.Statuses)
	if out.TermsChecked {
		b.addTerms(out.Terms.Expected, out.Terms.Hit)
	}
}

func (b *bookStats) addTerms(expected, hit int) {
	var t termRate
	if b.Terminology != nil {
		t = *b.Terminology
	}
	t = newTermRate(t.Expected+expected, t.Hit+hit)
	b.Terminology = &t
}

// merge adds the record of another share of the same book (--merge).
func (b *bookStats) merge(o *bookStats) {
	b.TextFilesRead += o.TextFilesRead
	b.Files += o.Files
	b.Pages += o.Pages
	b.Units += o.Units
	b.UnitsTranslated += o.UnitsTranslated
	b.UnitsSkipped += o.UnitsSkipped
	b.BackendCalls += o.BackendCalls
	addCounts(b.Languages, o.Languages)
	addCounts(b.LangSources, o.LangSources)
	addCounts(b.SegmentStatus, o.SegmentStatus)
	if o.Terminology != nil {
		b.addTerms(o.Terminology.Expected, o.Terminology.Hit)
	}
	if b.DocumentLanguage != o.DocumentLanguage {
		b.DocumentLanguage = "" // the shares told different languages
	}
}

// clone is a copy sharing no map with b (nil for nil).
func (b *bookStats) clone() *bookStats {
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

func addCounts(dst, src map[string]int) {
	for k, n := range src {
		dst[k] += n
	}
}

// bookLanguages detects the language of each book's text files among
// inputs (those it could read), taken as one document in page order, and
// starts each book's statistics record; none without books or with an
// explicit source language.
func (r *runner) bookLanguages(inputs []input) {
	books := r.books
	if r.book != nil {
		books = []*bookInfo{r.book}
	}
	if len(books) == 0 {
		return
	}
	r.bookLang, r.bookIdx = map[*bookInfo]string{}, map[*bookInfo]int{}
	stats := make([]*bookStats, len(books))
	for i, b := range books {
		r.bookIdx[b] = i
		stats[i] = newBookStats(b.Source)
	}
	defer r.pd.Update(func(d *paradataDoc) { d.Statistics.Books = stats })
	if r.s.Source != "auto" {
		return
	}
	// One file at a time is read; only its units' texts are kept.
	texts := map[*bookInfo][]string{}
	for _, in := range inputs {
		if in.BookOf == nil || in.Err != nil {
			continue
		}
		if src, err := regularfile.Read(in.Path); err == nil {
			texts[in.BookOf] = append(texts[in.BookOf], translator.UnitTexts(src)...)
			stats[r.bookIdx[in.BookOf]].TextFilesRead++
		}
	}
	for i, b := range books {
		st := stats[i]
		st.DocumentLanguage = translator.BookLanguage(texts[b], nil, r.s.Order, r.usage)
		st.DeclaredLanguage = translator.DeclaredLanguage(b.Languages)
		r.bookLang[b] = st.DocumentLanguage
		if r.bookLang[b] == "" {
			r.bookLang[b] = st.DeclaredLanguage // not detected: the declared one
		}
		r.log.Info("book language detected over its text files as one document", "book", b.Source,
			"files", st.TextFilesRead, "language", st.DocumentLanguage, "declared", st.DeclaredLanguage)
	}
}

// bookDone counts a translated text file of the book in its record.
func (r *runner) bookDone(in input, out *translator.Output) {
	i, ok := r.bookIdx[in.BookOf]
	if !ok {
		return
	}
	r.pd.Update(func(d *paradataDoc) {
		if i < len(d.Statistics.Books) {
			d.Statistics.Books[i].add(out)
		}
	})
}

// mergeBooks adds the book records of a shard run to those merged so far:
// a book's shares (same source) make one record.
func mergeBooks(into, from []*bookStats) []*bookStats {
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

func cloneBooks(bs []*bookStats) []*bookStats {
	if bs == nil {
		return nil
	}
	out := make([]*bookStats, len(bs))
	for i, b := range bs {
		out[i] = b.clone()
	}
	return out
}
