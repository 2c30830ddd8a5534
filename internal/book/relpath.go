package book

import (
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// RelPath is the slash-separated path a text file of the book at bookLoc
// keeps under an output folder: its path relative to the METS
// file or manifest when it lies beside or below it (ocr/00000001.xml),
// otherwise its host and path (files.example.org/alto/1.xml) or, for a
// local file elsewhere, "external/" and its absolute path. Every segment
// is made safe (no "..", no separators or odd characters), and a name
// without an extension gets one from its format.
func RelPath(bookLoc string, t Text) string {
	var segs []string
	if IsURL(t.Location) {
		u, _ := url.Parse(t.Location)
		p := u.EscapedPath()
		if bu, err := url.Parse(bookLoc); err == nil && IsURL(bookLoc) && strings.EqualFold(bu.Host, u.Host) &&
			strings.HasPrefix(p, dirSlash(bu.EscapedPath())) {
			p = strings.TrimPrefix(p, dirSlash(bu.EscapedPath()))
		} else {
			p = u.Host + "/" + p
		}
		if u.RawQuery != "" {
			p += "_" + u.RawQuery
		}
		if unesc, err := url.PathUnescape(p); err == nil {
			p = unesc
		}
		segs = strings.Split(p, "/")
	} else {
		rel, err := filepath.Rel(filepath.Dir(bookLoc), t.Location)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			abs, _ := filepath.Abs(t.Location)
			rel = filepath.Join("external", abs)
		}
		segs = strings.Split(filepath.ToSlash(rel), "/")
	}
	var clean []string
	for _, seg := range segs {
		seg = strings.Trim(unsafeName.ReplaceAllString(seg, "_"), "._")
		if seg != "" {
			clean = append(clean, seg)
		}
	}
	if len(clean) == 0 {
		clean = []string{"text"}
	}
	last := clean[len(clean)-1]
	if path.Ext(last) == "" {
		ext := ".xml"
		if t.Format == HOCR {
			ext = ".hocr"
		}
		clean[len(clean)-1] = last + ext
	}
	return strings.Join(clean, "/")
}

// dirSlash is the folder of the URL path p with one trailing slash ("/"
// for a file at the root, whose path.Dir is "/" already).
func dirSlash(p string) string {
	d := path.Dir(p)
	if !strings.HasSuffix(d, "/") {
		d += "/"
	}
	return d
}
