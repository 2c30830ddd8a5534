// Command reviewcheck measures pageclass's review flags on pages made on
// the fly from the held-out sample pages (nothing is copied into the
// repository):
//
//   - upright: the held-out pages as they are;
//   - rot90, rot180, rot270: each turned clockwise by that angle;
//   - blank: each page with its ink replaced by its own paper (pixels drawn
//     from the page's paper), its outer margins (scanner edges) kept;
//   - nearblank: the blank page with one small window of the original
//     (3% of the width by 1.5% of the height, where the page has most ink: a
//     page number, a stamp) put back.
//
// It runs pageclass on each folder (the arguments after "--" are passed on,
// e.g. --best -m weights/demo) and reports, from the review tables: on the
// upright pages the precision of the pages not flagged and the share flagged
// (the gold category is the page's folder); the share of rotated copies
// flagged rotated (and with the right angle); the share of blank and
// near-blank pages flagged near-blank; and the share of upright pages wrongly
// flagged rotated or near-blank.
//
//	go run ./test/reviewcheck [-pages ../shared/data/pages] [-folds weights/demo/folds.csv] \
//	    [-column "fold 1"] [-split test|dev] [-pageclass bin/pageclass] [-keep DIR] -- --best
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	pages := flag.String("pages", "../shared/data/pages", "labelled sample pages (category folders)")
	folds := flag.String("folds", "weights/demo/folds.csv", "folds CSV: the pages marked test in -column are used")
	column := flag.String("column", "fold 1", "fold column of -folds")
	split := flag.String("split", "test", "which pages of the column: test (held out) or dev")
	bin := flag.String("pageclass", "bin/pageclass", "pageclass executable")
	keep := flag.String("keep", "", "keep the fixtures and results in this folder (default: a temporary one, removed)")
	flag.Parse()
	if err := run(*pages, *folds, *column, *split, *bin, *keep, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "reviewcheck:", err)
		os.Exit(1)
	}
}

// variants are the fixture folders, in report order.
var variants = []string{"upright", "rot90", "rot180", "rot270", "blank", "nearblank"}

func run(pagesDir, foldsCSV, column, split, bin, keep string, args []string) error {
	held, err := heldOut(foldsCSV, column, split)
	if err != nil {
		return err
	}
	work := keep
	if work == "" {
		if work, err = os.MkdirTemp("", "reviewcheck"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	rng := rand.New(rand.NewPCG(420, 1))
	for _, rel := range held {
		img, err := readPNG(filepath.Join(pagesDir, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		blank := blanked(img, rng)
		made := map[string]image.Image{
			"upright": img, "rot90": rotate(img, 1), "rot180": rotate(img, 2), "rot270": rotate(img, 3),
			"blank": blank, "nearblank": nearBlank(img, blank),
		}
		for v, m := range made {
			if err := writePNG(filepath.Join(work, "in", v, filepath.FromSlash(rel)), m); err != nil {
				return err
			}
		}
	}
	fmt.Printf("%d pages (%s, %s = %s) of %s; pageclass %s\n", len(held), foldsCSV, column, split, pagesDir, strings.Join(args, " "))
	tables := map[string][]row{}
	for _, v := range variants {
		out := filepath.Join(work, "result", v)
		cmd := exec.Command(bin, append([]string{"-d", filepath.Join(work, "in", v), "--results", out}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("pageclass on %s: %v\n%s", v, err, stderr.String())
		}
		m, _ := filepath.Glob(filepath.Join(out, "*_REVIEW.csv"))
		if len(m) != 1 {
			return fmt.Errorf("%s: %d review tables", out, len(m))
		}
		if tables[v], err = readTable(m[0]); err != nil {
			return err
		}
		if len(tables[v]) != len(held) {
			return fmt.Errorf("%s: %d rows for %d pages", m[0], len(tables[v]), len(held))
		}
	}
	report(os.Stdout, tables)
	return nil
}

// heldOut lists the pages marked split (test, dev) in column of the folds
// CSV.
func heldOut(path, column, split string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	col := -1
	for i, h := range recs[0] {
		if h == column {
			col = i
		}
	}
	if col < 0 {
		return nil, fmt.Errorf("%s: no column %q", path, column)
	}
	var out []string
	for _, r := range recs[1:] {
		if r[col] == split {
			out = append(out, r[0])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no %s pages in %q", path, split, column)
	}
	sort.Strings(out)
	return out, nil
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

func writePNG(path string, img image.Image) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// rotate turns img clockwise by quarter × 90 degrees.
func rotate(img image.Image, quarter int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	ow, oh := w, h
	if quarter%2 == 1 {
		ow, oh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, ow, oh))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var nx, ny int
			switch quarter {
			case 1:
				nx, ny = h-1-y, x
			case 2:
				nx, ny = w-1-x, h-1-y
			case 3:
				nx, ny = y, w-1-x
			}
			out.Set(nx, ny, img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return out
}

func lum(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)) / 257
}

// blanked replaces the ink of img (pixels darker than 0.93 × its paper, the
// 90th percentile of luminance, and their neighbours) inside its outer 5%
// margins with pixels drawn from its own paper, so the blank page keeps the page's paper colour,
// texture and edges.
func blanked(img image.Image, rng *rand.Rand) *image.RGBA {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	ls := make([]float64, 0, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := img.At(b.Min.X+x, b.Min.Y+y)
			out.Set(x, y, c)
			ls = append(ls, lum(c))
		}
	}
	sorted := append([]float64(nil), ls...)
	sort.Float64s(sorted)
	paper := sorted[len(sorted)*9/10]
	var paperPix []color.Color
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if ls[y*w+x] >= 0.93*paper {
				paperPix = append(paperPix, out.At(x, y))
			}
		}
	}
	if len(paperPix) == 0 {
		paperPix = []color.Color{color.White}
	}
	// ink: darker than 0.93 × paper, grown by one pixel so the antialiased
	// rims of strokes go too
	ink := func(x, y int) bool {
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				xx, yy := x+dx, y+dy
				if xx >= 0 && yy >= 0 && xx < w && yy < h && ls[yy*w+xx] < 0.93*paper {
					return true
				}
			}
		}
		return false
	}
	mx, my := w/20, h/20
	for y := my; y < h-my; y++ {
		for x := mx; x < w-mx; x++ {
			if ink(x, y) {
				out.Set(x, y, paperPix[rng.IntN(len(paperPix))])
			}
		}
	}
	return out
}

// nearBlank puts back into blank one window of the original, 3% of the width
// by 1.5% of the height (at least 2×2 pixels), where the original has the
// most ink inside its margins.
func nearBlank(orig image.Image, blank *image.RGBA) *image.RGBA {
	b := orig.Bounds()
	w, h := b.Dx(), b.Dy()
	ww, wh := max(2, w*3/100), max(2, h*15/1000)
	best, bx, by := -1.0, 0, 0
	for y := h / 20; y+wh <= h-h/20; y += max(1, wh/2) {
		for x := w / 20; x+ww <= w-w/20; x += max(1, ww/2) {
			ink := 0.0
			for yy := y; yy < y+wh; yy++ {
				for xx := x; xx < x+ww; xx++ {
					ink += 255 - lum(orig.At(b.Min.X+xx, b.Min.Y+yy))
				}
			}
			if ink > best {
				best, bx, by = ink, x, y
			}
		}
	}
	out := image.NewRGBA(blank.Rect)
	copy(out.Pix, blank.Pix)
	for y := by; y < by+wh; y++ {
		for x := bx; x < bx+ww; x++ {
			out.Set(x, y, orig.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return out
}

// row is one review-table row by column name.
type row map[string]string

func readTable(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, errors.New(path + ": empty")
	}
	var out []row
	for _, r := range recs[1:] {
		m := row{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out, nil
}

func has(r row, reason string) bool {
	for _, x := range strings.Split(r["REASONS"], ";") {
		if x == reason {
			return true
		}
	}
	return false
}

func share(rows []row, f func(row) bool) string {
	n := 0
	for _, r := range rows {
		if f(r) {
			n++
		}
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", n, len(rows), 100*float64(n)/float64(len(rows)))
}

func report(w io.Writer, t map[string][]row) {
	up := t["upright"]
	gold := func(r row) string { return strings.SplitN(r["FILE"], "/", 2)[0] }
	kept, right, unknown := 0, 0, 0
	for _, r := range up {
		switch r["NEEDS_REVIEW"] {
		case "no":
			kept++
			if r["CLASS-1"] == gold(r) {
				right++
			}
		case "":
			unknown++
		}
	}
	fmt.Fprintf(w, "upright: Top-1 right %s\n", share(up, func(r row) bool { return r["CLASS-1"] == gold(r) }))
	if unknown == len(up) {
		fmt.Fprintf(w, "upright: no calibration for these models: needs_review unknown on every page\n")
	} else {
		prec := "– (every page flagged)"
		if kept > 0 {
			prec = fmt.Sprintf("%d/%d (%.0f%%)", right, kept, 100*float64(right)/float64(kept))
		}
		fmt.Fprintf(w, "upright: flagged for review %s; precision of the pages not flagged %s; calibration %s\n",
			share(up, func(r row) bool { return r["NEEDS_REVIEW"] == "yes" }), prec, up[0]["CALIBRATION"])
	}
	dk, dr := 0, 0
	for _, r := range up {
		if r["NEEDS_REVIEW"] != "" && !has(r, "low_margin") && !has(r, "disagreement") && !has(r, "target_unreachable") {
			dk++
			if r["CLASS-1"] == gold(r) {
				dr++
			}
		}
	}
	if unknown != len(up) {
		fmt.Fprintf(w, "upright: not flagged for doubt (low_margin, disagreement, target_unreachable) %d/%d, of which right %d\n", dk, len(up), dr)
	}
	fmt.Fprintf(w, "upright: wrongly flagged rotated %s, near-blank %s, either %s\n",
		share(up, func(r row) bool { return has(r, "rotated") }), share(up, func(r row) bool { return has(r, "near_blank") }),
		share(up, func(r row) bool { return has(r, "rotated") || has(r, "near_blank") }))
	var rot []row
	for i, v := range []string{"rot90", "rot180", "rot270"} {
		fmt.Fprintf(w, "%s: flagged rotated %s, with the angle that turns it back (%d) %s\n", v,
			share(t[v], func(r row) bool { return has(r, "rotated") }), 360-90*(i+1),
			share(t[v], func(r row) bool { return has(r, "rotated") && r["ROTATION"] == fmt.Sprint(360-90*(i+1)) }))
		rot = append(rot, t[v]...)
	}
	fmt.Fprintf(w, "rotated (all three): flagged rotated %s\n", share(rot, func(r row) bool { return has(r, "rotated") }))
	if up[0]["ROTATION_CONFIDENCE"] != "" {
		fmt.Fprintln(w, "flagged rotated at other thresholds of the most probable turn (upright pages / turned copies):")
		for _, th := range []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.95} {
			at := func(r row) bool {
				var c [4]float64
				fmt.Sscanf(r["ROTATION_CONFIDENCE"], "%f/%f/%f/%f", &c[0], &c[1], &c[2], &c[3])
				b := 0
				for i := range c {
					if c[i] > c[b] {
						b = i
					}
				}
				return b != 0 && c[b] >= th
			}
			fmt.Fprintf(w, "  %.2f: %s / %s\n", th, share(up, at), share(rot, at))
		}
	}
	for _, v := range []string{"blank", "nearblank"} {
		fmt.Fprintf(w, "%s: flagged near-blank %s\n", v, share(t[v], func(r row) bool { return has(r, "near_blank") }))
	}
}
