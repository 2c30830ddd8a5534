package main

import (
	"archivekit/internal/regularfile"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator"
)

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
	stats := make([]*runmeta.Book, len(books))
	for i, b := range books {
		r.bookIdx[b] = i
		stats[i] = runmeta.NewBook(b.Source)
	}
	defer r.pd.Update(func(d *runmeta.Doc) { d.Statistics.Books = stats })
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
	r.pd.Update(func(d *runmeta.Doc) {
		if i < len(d.Statistics.Books) {
			d.Statistics.Books[i].Add(runmeta.ItemOf(out))
		}
	})
}
