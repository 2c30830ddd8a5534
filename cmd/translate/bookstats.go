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
		stats[i].SetProblems(b.Problems)
	}
	defer r.pd.SetBooks(stats)
	if r.s.Source != "auto" {
		return
	}
	// One file at a time is read; only its units' texts are kept.
	texts := map[*bookInfo][]string{}
	read := map[*bookInfo]int{}
	for _, in := range inputs {
		if in.BookOf == nil || in.Err != nil {
			continue
		}
		if src, err := regularfile.Read(in.Path); err == nil {
			texts[in.BookOf] = append(texts[in.BookOf], translator.UnitTexts(src)...)
			read[in.BookOf]++
		}
	}
	for i, b := range books {
		st := stats[i]
		r.bookLang[b] = st.Detect(r.s.Source, texts[b], read[b], b.Languages, r.s.Order, r.usage)
		r.log.Info("book language detected over its text files as one document", "book", b.Source,
			"files", st.TextFilesRead, "language", st.DocumentLanguage, "declared", st.DeclaredLanguage)
	}
}

// bookDone counts a translated text file of the book in its record.
func (r *runner) bookDone(in input, out *translator.Output) {
	if i, ok := r.bookIdx[in.BookOf]; ok {
		r.pd.BookDone(i, runmeta.ItemOf(out))
	}
}
