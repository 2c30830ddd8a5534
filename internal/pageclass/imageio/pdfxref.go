package imageio

import (
	"bytes"
	"strconv"
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
// where its number begins and its value.
func startxref(data []byte) (at int, offset int64, ok bool) {
	tail := max(0, len(data)-2048)
	i := bytes.LastIndex(data[tail:], []byte("startxref"))
	if i < 0 {
		return 0, 0, false
	}
	at = tail + i + len("startxref")
	for at < len(data) && isPDFSpace(data[at]) {
		at++
	}
	n, _, ok := pdfInt(data, at)
	return at, n, ok
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
		p := int(offset)
		for p < len(data) && isPDFSpace(data[p]) {
			p++
		}
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
		dict := data[p+trailer:]
		if e := bytes.Index(dict, []byte("startxref")); e >= 0 {
			dict = dict[:e]
		}
		if v, ok := dictInt(dict, "/XRefStm"); ok && (v < 0 || v >= size) {
			return true
		}
		prev, ok := dictInt(dict, "/Prev")
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
		q := skipPDFSpace(data, p)
		first, q, ok := pdfInt(data, q)
		if !ok || first < 0 {
			return p, false
		}
		count, q, ok := pdfInt(data, skipPDFSpace(data, q))
		if !ok || count < 0 || count > size/18 {
			return p, false
		}
		for range count {
			off, r, ok := pdfInt(data, skipPDFSpace(data, q))
			if !ok {
				return q, false
			}
			_, r, ok = pdfInt(data, skipPDFSpace(data, r))
			if !ok {
				return q, false
			}
			r = skipPDFSpace(data, r)
			if r >= len(data) {
				return r, false
			}
			if data[r] == 'n' && off >= size {
				return r, true
			}
			q = r + 1
		}
		p = q
	}
}

// dictInt is the integer after key in dict ("/Prev 1234"), if any.
func dictInt(dict []byte, key string) (int64, bool) {
	i := bytes.Index(dict, []byte(key))
	if i < 0 {
		return 0, false
	}
	j := i + len(key)
	if j < len(dict) && !isPDFSpace(dict[j]) {
		return 0, false // a longer name
	}
	v, _, ok := pdfInt(dict, skipPDFSpace(dict, j))
	return v, ok
}

// pdfInt reads the decimal integer at data[p:] and returns it and where it
// ends.
func pdfInt(data []byte, p int) (int64, int, bool) {
	e := p
	for e < len(data) && e-p < 18 && data[e] >= '0' && data[e] <= '9' {
		e++
	}
	if e == p {
		return 0, p, false
	}
	v, err := strconv.ParseInt(string(data[p:e]), 10, 64)
	return v, e, err == nil
}

func skipPDFSpace(data []byte, p int) int {
	for p < len(data) && isPDFSpace(data[p]) {
		p++
	}
	return p
}

// isPDFSpace reports whether c is PDF white space (ISO 32000-1 7.2.2).
func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}
