package imageio

import (
	"bytes"
	"math"
	"strconv"

	"archivekit/internal/pageclass/pdfsyntax"
)

// Poppler (22.08, Debian 12), reading a PDF through libvips, never returns
// when the PDF sends it past its last byte: an xref section at an offset
// beyond the end, or an object listed there (a 290-byte PDF whose
// startxref said 441 kept a core busy until killed). Such offsets are what
// a PDF whose bytes were cut or changed in transit has (a text-mode
// transfer's line endings, a truncation before an incremental update's
// trailer), and poppler's answer to any broken cross-reference table is to
// rebuild it by scanning the file's objects. pdfWithinBounds checks the
// classic tables (startxref, each section's entries, /Prev and /XRefStm)
// and, when one points past the end, hands poppler the PDF with its
// startxref set to 0, so it rebuilds the table from the objects the file
// holds instead of reading past its end. A cross-reference stream (PDF
// 1.5), whose entries are compressed, is not checked.

// maxXrefSections bounds the /Prev chain followed.
const maxXrefSections = 64

// pdfWithinBounds returns data, or a copy whose startxref is 0 when a
// classic cross-reference section or entry of data points past its end.
func pdfWithinBounds(data []byte) []byte {
	at, start, ok := startxref(data)
	if !ok || !xrefPastEnd(data, start) {
		return data
	}
	end := at
	for end < len(data) && data[end] >= '0' && data[end] <= '9' {
		end++
	}
	out := make([]byte, 0, len(data))
	out = append(out, data[:at]...)
	out = append(out, '0')
	return append(out, data[end:]...)
}

// startxref finds the last "startxref" in data's final 2 KiB and returns
// where its number begins and its value, read as poppler reads it: the
// digits, up to the first other byte ("441J" is 441; a fuzzed PDF so
// ending made poppler loop while a whole-token reading saw no number).
func startxref(data []byte) (at int, offset int64, ok bool) {
	tail := max(0, len(data)-2048)
	i := bytes.LastIndex(data[tail:], []byte("startxref"))
	if i < 0 {
		return 0, 0, false
	}
	p := pdfsyntax.NewParser(data, tail+i+len("startxref"))
	p.Space()
	at = p.Pos()
	end := at
	for end < len(data) && data[end] >= '0' && data[end] <= '9' {
		end++
	}
	if end == at {
		return at, 0, false // no number, or a signed one
	}
	if end-at > 18 {
		return at, math.MaxInt64, true // past any file's end
	}
	offset, err := strconv.ParseInt(string(data[at:end]), 10, 64)
	return at, offset, err == nil
}

// xrefPastEnd follows the chain of classic cross-reference sections from
// offset and reports whether a section, or an in-use entry, lies at or
// past the end of data.
func xrefPastEnd(data []byte, offset int64) bool {
	size := int64(len(data))
	seen := map[int64]bool{}
	for range maxXrefSections {
		if offset < 0 || offset >= size {
			return true
		}
		if seen[offset] {
			return false
		}
		seen[offset] = true
		sp := pdfsyntax.NewParser(data, int(offset))
		sp.Space()
		p := sp.Pos()
		if !bytes.HasPrefix(data[p:], []byte("xref")) {
			return false // a cross-reference stream, or no table: poppler's to judge
		}
		p += len("xref")
		var past bool
		if p, past = xrefEntriesPastEnd(data, p); past {
			return true
		}
		trailer := bytes.Index(data[p:], []byte("trailer"))
		if trailer < 0 {
			return false
		}
		dict, _ := pdfsyntax.NewParser(data, p+trailer+len("trailer")).Value().(pdfsyntax.Dict)
		if v, ok := dict["XRefStm"].(int64); ok && (v < 0 || v >= size) {
			return true
		}
		prev, ok := dict["Prev"].(int64)
		if !ok {
			return false
		}
		offset = prev
	}
	return false
}

// xrefEntriesPastEnd reads the subsections of a classic table from p
// ("first count" lines, then count entries "offset generation n|f") and
// reports whether an in-use entry's offset is at or past the end; it
// returns where the subsections end.
func xrefEntriesPastEnd(data []byte, p int) (int, bool) {
	size := int64(len(data))
	for {
		sp := pdfsyntax.NewParser(data, p)
		first, ok := sp.Int()
		if !ok || first < 0 {
			return p, false
		}
		count, ok := sp.Int()
		if !ok || count < 0 || count > size/18 {
			return p, false
		}
		for range count {
			off, ok := sp.Int()
			if !ok {
				return sp.Pos(), false
			}
			if _, ok = sp.Int(); !ok {
				return sp.Pos(), false
			}
			sp.Space()
			r := sp.Pos()
			if r >= len(data) {
				return r, false
			}
			if data[r] == 'n' && off >= size {
				return r, true
			}
			sp = pdfsyntax.NewParser(data, r+1) // past the n or f
		}
		p = sp.Pos()
	}
}
