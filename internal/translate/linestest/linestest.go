// Package linestest checks, for tests, the lines read from a translated
// OCR file (alto.Lines, pagexml.Lines, hocr.Lines) against its original's.
package linestest

import (
	"os"
	"slices"
	"testing"

	"archivekit/internal/bookout"
)

// SameLines checks the lines of a translated OCR file (got, read by
// alto.Lines, pagexml.Lines or hocr.Lines) against those of its original:
// the same pages and sizes, the same lines with the same boxes and
// polygons, each box inside its page, each text translate(the original's
// text). It returns how many lines read differently from the original.
func SameLines(t testing.TB, name string, orig, got []bookout.OCRPage, translate func(string) string) int {
	t.Helper()
	if len(got) != len(orig) {
		t.Fatalf("%s: %d pages, want %d", name, len(got), len(orig))
	}
	changed := 0
	for i, p := range got {
		o := orig[i]
		if p.Width != o.Width || p.Height != o.Height || len(p.Lines) != len(o.Lines) {
			t.Fatalf("%s page %d: %g × %g, %d lines; want %g × %g, %d", name, i, p.Width, p.Height, len(p.Lines), o.Width, o.Height, len(o.Lines))
		}
		for k, l := range p.Lines {
			ol := o.Lines[k]
			if want := translate(ol.Text); l.Text != want {
				t.Errorf("%s line %d: %q, want %q", name, k, l.Text, want)
			}
			if l.Text != ol.Text {
				changed++
			}
			if (l.Box == nil) != (ol.Box == nil) || l.Box != nil && *l.Box != *ol.Box {
				t.Errorf("%s line %d: box %v, want %v", name, k, l.Box, ol.Box)
			}
			if !slices.Equal(l.Polygon, ol.Polygon) {
				t.Errorf("%s line %d: polygon %v, want %v", name, k, l.Polygon, ol.Polygon)
			}
			if b := l.Box; b != nil && (b.X < 0 || b.Y < 0 || b.X+b.W > p.Width || b.Y+b.H > p.Height) {
				t.Errorf("%s line %d: box %+v outside the %g × %g page", name, k, *b, p.Width, p.Height)
			}
		}
	}
	return changed
}

// Boxed counts the lines of p with a box.
func Boxed(p bookout.OCRPage) int {
	n := 0
	for _, l := range p.Lines {
		if l.Box != nil {
			n++
		}
	}
	return n
}

// Page is what a file of one page should read as: its size, its lines
// with text and how many of them have a box.
type Page struct {
	W, H         float64
	Lines, Boxed int
}

// ReadPage reads file and its lines (read, into target), checks that they
// are one page as want, and returns the file and its pages.
func ReadPage(t testing.TB, file string, read func([]byte, string) ([]bookout.OCRPage, error), target string, want Page) ([]byte, []bookout.OCRPage) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := read(src, target)
	if err != nil || len(pages) != 1 {
		t.Fatalf("%s: %d pages, %v", file, len(pages), err)
	}
	p := pages[0]
	if got := (Page{p.Width, p.Height, len(p.Lines), Boxed(p)}); got != want {
		t.Errorf("%s: %+v, want %+v", file, got, want)
	}
	return src, pages
}
