package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator"
)

// A service that answers one text to everything is refused from its third
// such reply among its first calls, or its fifth later
// (backend.SameReplies): the replies before passed, and the documents
// translated with them were written. When the refusal names them, they are
// withdrawn: their output and log are removed, they are listed in the
// failures table, and the run ends incomplete, so a --resume translates
// them again (the ledger's entry finds its outputs gone).

// writtenDoc is an input translated and written in this run.
type writtenDoc struct {
	name, origin string
	doc          string // its name in the run metadata (runmeta.Run.Done)
	it           runmeta.Item
	out, log     string
	bookOf       *bookInfo // input.BookOf
}

// wrote notes an input translated and written, keeping the last
// backend.SameItems.
func (p *pass) wrote(r *runner, in input, name string, out *translator.Output, outPath string) {
	_, logPath := r.outPaths(in)
	p.last = append(p.last, writtenDoc{name: name, origin: in.Origin, doc: filepath.ToSlash(filepath.Join(in.Dir, out.Stem)),
		it: runmeta.ItemOf(out), out: outPath, log: logPath, bookOf: in.BookOf})
	if len(p.last) > backend.SameItems {
		p.last = slices.Delete(p.last, 0, len(p.last)-backend.SameItems)
	}
}

// withdraw withdraws the inputs written in this run that err, a refusal of
// a reply the service gave for everything (*backend.SameReplyError), names
// besides the input name it failed.
func (r *runner) withdraw(p *pass, name string, err error) {
	var se *backend.SameReplyError
	if !errors.As(err, &se) {
		return
	}
	for _, item := range se.Items {
		i := slices.IndexFunc(p.last, func(d writtenDoc) bool { return d.name == item })
		if item == name || i < 0 {
			continue
		}
		d := p.last[i]
		p.last = slices.Delete(p.last, i, i+1)
		for _, f := range []string{d.out, d.log} {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				r.log.Error("a withdrawn translation could not be removed: remove it by hand", "file", f, "error", err)
			}
		}
		p.written = slices.DeleteFunc(p.written, func(f string) bool { return f == d.out })
		p.books = slices.DeleteFunc(p.books, func(b bookFile) bool { return b.out == d.out })
		r.pd.Withdraw(d.doc, d.it, d.out, d.log)
		if b, ok := r.bookIdx[d.bookOf]; ok {
			r.pd.BookWithdraw(b, d.it)
		}
		r.fail(d.name, d.origin, fmt.Errorf("written earlier in this run, now withdrawn (%s and its log removed): its translation holds the reply refused since: %w", d.out, se))
		p.bar.Withdraw(1)
		p.undone++
	}
}
