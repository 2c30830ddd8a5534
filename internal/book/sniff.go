package book

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"archivekit/internal/regularfile"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// Namespaces of the text formats.
const (
	altoNS     = "http://www.loc.gov/standards/alto/"
	pageNS     = "http://schema.primaresearch.org/PAGE/gts/pagecontent/"
	sniffBytes = 64 << 10
)

// Sniff returns the format of a text file from its start: ALTO (root
// element alto), PAGE (root PcGts) or hOCR (an HTML or XHTML document with
// an ocr_page element or an ocr-system meta). A file of another kind is an
// error naming its root element. It reads at most SniffMax bytes of data;
// given 64 KiB or less (a file's head) and finding no root element in a
// head of exactly 64 KiB, it answers ErrRootBeyond: SniffHead then reads
// further.
func Sniff(data []byte) (Format, error) {
	if len(data) <= sniffBytes {
		return sniff(data, sniffBytes)
	}
	return sniff(data, SniffMax)
}

// ErrRootBeyond is Sniff's error for a file's head of 64 KiB that holds no
// root element (a long comment or declaration before it).
var ErrRootBeyond = errors.New("no root element in its first 64 KiB")

// SniffMax is the most of a file Sniff reads to find its root element.
const SniffMax = 4 << 20

// SniffHead returns the start of the local file p that tells its format:
// head (its first LooksLen bytes, read here when nil), or up to SniffMax
// bytes when head holds no root element and the file goes on.
func SniffHead(p string, head []byte) ([]byte, error) {
	if head == nil {
		var err error
		if head, err = ReadHead(p); err != nil {
			return nil, err
		}
	}
	if _, err := Sniff(head); !errors.Is(err, ErrRootBeyond) {
		return head, nil
	}
	return readPrefix(p, SniffMax)
}

// readPrefix returns the first n bytes of the regular file p.
func readPrefix(p string, n int64) ([]byte, error) {
	f, err := regularfile.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return b, nil
}

// sniff is Sniff reading at most limit bytes of data.
func sniff(data []byte, limit int) (Format, error) {
	cut := len(data) >= limit // what follows is not read: the root may lie there
	if len(data) > limit {
		data = data[:limit]
	}
	data = fromUTF16(data)
	root, err := rootElement(data)
	if err != nil {
		if isHOCR(data) {
			return HOCR, nil
		}
		if cut && limit == sniffBytes {
			return "", fmt.Errorf("%w (a comment or declaration longer than that before it?): %v", ErrRootBeyond, err)
		}
		if cut {
			return "", fmt.Errorf("no root element in its first %d MiB: %w", limit>>20, err)
		}
		return "", err
	}
	switch strings.ToLower(root.Local) {
	case "alto":
		return ALTO, nil
	case "pcgts":
		return PAGE, nil
	case "html":
		if isHOCR(data) {
			return HOCR, nil
		}
		return "", fmt.Errorf("an HTML document without hOCR markup")
	}
	if root.Space != "" {
		return "", fmt.Errorf("root element %s in namespace %s", root.Local, root.Space)
	}
	return "", fmt.Errorf("root element %s", root.Local)
}

// rootElement returns the name of the first element of an XML document.
func rootElement(data []byte) (xml.Name, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	// A declared encoding other than UTF-8 (ISO-8859-1, windows-1250,
	// and UTF-16 once fromUTF16 made the bytes UTF-8): the element
	// names the formats are told by are ASCII, so each byte is read as a
	// Latin-1 letter; the text is not kept.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return latin1Reader(r), nil }
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return xml.Name{}, fmt.Errorf("no XML element")
		}
		if err != nil {
			return xml.Name{}, fmt.Errorf("not XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			name := se.Name
			// RawToken leaves the prefix in Space: find its namespace
			for _, a := range se.Attr {
				if (name.Space == "" && a.Name.Space == "" && a.Name.Local == "xmlns") ||
					(name.Space != "" && a.Name.Space == "xmlns" && a.Name.Local == name.Space) {
					name.Space = a.Value
				}
			}
			return name, nil
		}
	}
}

// latin1Reader reads r's bytes as ISO-8859-1, each one the rune of its
// value, as UTF-8.
func latin1Reader(r io.Reader) io.Reader { return charmap.ISO8859_1.NewDecoder().Reader(r) }

// fromUTF16 returns a UTF-16 document's start (told by its byte-order mark,
// or by "<" as its first character without one) as UTF-8, and any other
// data as it is. An odd last byte, cut by the sniff's bound, is dropped.
func fromUTF16(data []byte) []byte {
	var order unicode.Endianness
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{'<', 0}):
		order = unicode.LittleEndian
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}), bytes.HasPrefix(data, []byte{0, '<'}):
		order = unicode.BigEndian
	default:
		return data
	}
	out, err := unicode.UTF16(order, unicode.IgnoreBOM).NewDecoder().Bytes(data[:len(data)&^1])
	if err != nil {
		return data
	}
	return bytes.TrimPrefix(out, []byte("\ufeff"))
}

// isHOCR says whether an HTML document carries hOCR markup.
func isHOCR(data []byte) bool {
	s := strings.ToLower(string(data))
	return strings.Contains(s, "ocr_page") || strings.Contains(s, "ocr-system") || strings.Contains(s, "ocr-capabilities")
}

// declaredFormat reads a format from what a METS file or a manifest says:
// USE, MIMETYPE, format or profile. Empty when it says none.
func declaredFormat(words ...string) Format {
	for _, w := range words {
		w = strings.ToLower(w)
		switch {
		case strings.Contains(w, "alto"):
			return ALTO
		case strings.Contains(w, "hocr"):
			return HOCR
		case strings.Contains(w, "prima.page"), strings.Contains(w, "primaresearch.org/page"), w == "page",
			strings.HasSuffix(w, "-page"), strings.Contains(w, "page+xml"), strings.Contains(w, "pagexml"):
			return PAGE
		}
	}
	return ""
}
