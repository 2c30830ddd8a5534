package book

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding/htmlindex"
)

// LooksLen is the number of bytes Looks reads from the start of a file.
const LooksLen = 64 << 10

// Looks says whether the start of a file (its first LooksLen bytes or
// fewer) reads as a book: XML naming the METS namespace (a METS document,
// also inside an OAI-PMH answer), or JSON naming the IIIF Presentation API
// context. It is a quick test for telling books from other files in a
// folder, by content and not by name; Read decides.
//
// A document in UTF-16 (a byte-order mark, or "<" as its first character)
// is read as its UTF-8; an XML document whose root element is named mets
// in another namespace (http://www.loc.gov/METS without its slash) looks
// like one too, so that Read says what is wrong with it rather than a
// folder run passing over it without a word.
func Looks(head []byte) bool {
	if len(head) > LooksLen {
		head = head[:LooksLen]
	}
	t := bytes.TrimLeft(asUTF8(head), " \t\r\n")
	switch {
	case len(t) == 0:
		return false
	case t[0] == '<':
		if bytes.Contains(t, []byte(metsNS)) {
			return true
		}
		root, err := rootElement(t)
		return err == nil && strings.EqualFold(root.Local, "mets")
	case t[0] == '{':
		return bytes.Contains(t, []byte("iiif.io/api/presentation"))
	}
	return false
}

// asUTF8 is data without a UTF-8 byte-order mark, and a UTF-16 document
// (fromUTF16) as UTF-8: what Windows tools write (Notepad's "Unicode",
// PowerShell's -Encoding UTF8) read as the book it is.
func asUTF8(data []byte) []byte {
	return bytes.TrimPrefix(fromUTF16(data), []byte("\xef\xbb\xbf"))
}

// charsetReader reads a book's XML declared in an encoding other than
// UTF-8: UTF-16 as it is (asUTF8 made it UTF-8 already), any other by its
// WHATWG or IANA name (windows-1250, ISO-8859-2); an unknown one is an
// error naming it.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	l := strings.ToLower(strings.TrimSpace(label))
	if strings.HasPrefix(l, "utf-16") || l == "ucs-2" || l == "unicode" {
		return r, nil
	}
	e, err := htmlindex.Get(l)
	if err != nil || e == nil {
		return nil, fmt.Errorf("the declared encoding %q is not one this reader knows", label)
	}
	return e.NewDecoder().Reader(r), nil
}
