package book

import "bytes"

// LooksLen is the number of bytes Looks reads from the start of a file.
const LooksLen = 64 << 10

// Looks says whether the start of a file (its first LooksLen bytes or
// fewer) reads as a book: XML naming the METS namespace (a METS document,
// also inside an OAI-PMH answer), or JSON naming the IIIF Presentation API
// context. It is a quick test for telling books from other files in a
// folder, by content and not by name; Read decides.
func Looks(head []byte) bool {
	if len(head) > LooksLen {
		head = head[:LooksLen]
	}
	t := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case len(t) == 0:
		return false
	case t[0] == '<':
		return bytes.Contains(t, []byte("http://www.loc.gov/METS/"))
	case t[0] == '{':
		return bytes.Contains(t, []byte("iiif.io/api/presentation"))
	}
	return false
}
