// Package confmat draws confusion matrices as PNG images a person can read
// at a glance: normalised by true class, shares and counts in the cells,
// category names on both axes, the title on top, 300 dpi.
package confmat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// DPI of the confusion-matrix image.
const DPI = 300

// PNG draws a confusion matrix normalised by true class (each row
// sums to 1): one cell per (true, predicted) pair shaded from white to dark
// blue, the share printed in the cell (and the count below it), category
// names on both axes and the title on top. The image is 8 x 7.5 inches at
// 300 dpi and carries its resolution in a pHYs chunk.
func PNG(w io.Writer, title string, labels []string, counts [][]int) error {
	n := len(labels)
	if n == 0 || len(counts) != n {
		return fmt.Errorf("confusion matrix: %d labels, %d rows", n, len(counts))
	}
	for i, row := range counts {
		if len(row) != n {
			return fmt.Errorf("confusion matrix: %d labels, row %d (%s) has %d counts", n, i, labels[i], len(row))
		}
	}
	const W, H = 8 * DPI, 15 * DPI / 2
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)

	regular, err := face(goregular.TTF, 9)
	if err != nil {
		return err
	}
	bold, err := face(gobold.TTF, 12)
	if err != nil {
		return err
	}
	small, err := face(goregular.TTF, 7)
	if err != nil {
		return err
	}
	left, top := 520, 330
	cell := min((W-left-80)/n, (H-top-430)/n)
	gridW := cell * n

	text(img, bold, title, left+gridW/2, 150, true, color.Black)
	text(img, regular, "predicted category", left+gridW/2, top+gridW+360, true, color.Black)
	// y-axis caption, rotated
	vertical(img, regular, "true category", 70, top+gridW/2)

	for i := 0; i < n; i++ {
		rowSum := 0
		for _, c := range counts[i] {
			rowSum += c
		}
		for j := 0; j < n; j++ {
			share := 0.0
			if rowSum > 0 {
				share = float64(counts[i][j]) / float64(rowSum)
			}
			r := image.Rect(left+j*cell, top+i*cell, left+(j+1)*cell, top+(i+1)*cell)
			draw.Draw(img, r, &image.Uniform{shade(share)}, image.Point{}, draw.Src)
			ink := color.Color(color.Black)
			if share > 0.55 {
				ink = color.White
			}
			if counts[i][j] > 0 {
				text(img, small, fmt.Sprintf("%.2f", share), r.Min.X+cell/2, r.Min.Y+cell/2, true, ink)
				text(img, small, fmt.Sprintf("(%d)", counts[i][j]), r.Min.X+cell/2, r.Min.Y+cell/2+cell/4, true, ink)
			}
		}
		// row label (true), right-aligned before the grid
		lw := font.MeasureString(regular, labels[i]).Ceil()
		text(img, regular, labels[i], left-20-lw, top+i*cell+cell/2+12, false, color.Black)
		// column label (predicted), vertical under the grid
		vertical(img, regular, labels[i], left+i*cell+cell/2, top+gridW+30+font.MeasureString(regular, labels[i]).Ceil()/2)
	}
	// grid lines
	grey := &image.Uniform{color.RGBA{160, 160, 160, 255}}
	for k := 0; k <= n; k++ {
		draw.Draw(img, image.Rect(left+k*cell-1, top, left+k*cell+2, top+gridW), grey, image.Point{}, draw.Src)
		draw.Draw(img, image.Rect(left, top+k*cell-1, left+gridW, top+k*cell+2), grey, image.Point{}, draw.Src)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return err
	}
	_, err = w.Write(withDPI(buf.Bytes(), DPI))
	return err
}

func face(ttf []byte, points float64) (font.Face, error) {
	f, err := opentype.Parse(ttf)
	if err != nil {
		return nil, err
	}
	return opentype.NewFace(f, &opentype.FaceOptions{Size: points, DPI: DPI, Hinting: font.HintingFull})
}

// shade maps 0..1 to white..dark blue.
func shade(v float64) color.RGBA {
	lerp := func(a, b float64) uint8 { return uint8(a + (b-a)*v + 0.5) }
	return color.RGBA{lerp(247, 8), lerp(251, 48), lerp(255, 107), 255}
}

func text(dst draw.Image, f font.Face, s string, x, y int, centre bool, c color.Color) {
	if centre {
		x -= font.MeasureString(f, s).Ceil() / 2
		y += f.Metrics().Ascent.Ceil() / 2
	}
	d := font.Drawer{Dst: dst, Src: &image.Uniform{c}, Face: f, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// vertical draws s rotated 90 degrees anticlockwise, centred on (cx, cy).
func vertical(dst *image.RGBA, f font.Face, s string, cx, cy int) {
	w := font.MeasureString(f, s).Ceil() + 4
	h := f.Metrics().Height.Ceil() + 4
	tmp := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(tmp, tmp.Bounds(), image.White, image.Point{}, draw.Src)
	d := font.Drawer{Dst: tmp, Src: image.Black, Face: f, Dot: fixed.P(2, f.Metrics().Ascent.Ceil()+2)}
	d.DrawString(s)
	x0, y0 := cx-h/2, cy-w/2
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := tmp.RGBAAt(x, y)
			if c.R < 250 {
				dst.SetRGBA(x0+y, y0+(w-1-x), c)
			}
		}
	}
}

// withDPI inserts a pHYs chunk (pixels per metre) after the PNG's IHDR.
func withDPI(p []byte, dpi int) []byte {
	const ihdrEnd = 8 + 8 + 13 + 4 // signature, IHDR length+type, data, crc
	if len(p) < ihdrEnd {
		return p
	}
	ppm := uint32(float64(dpi)/0.0254 + 0.5)
	chunk := make([]byte, 4+4+9+4)
	binary.BigEndian.PutUint32(chunk[0:], 9)
	copy(chunk[4:], "pHYs")
	binary.BigEndian.PutUint32(chunk[8:], ppm)
	binary.BigEndian.PutUint32(chunk[12:], ppm)
	chunk[16] = 1 // unit: metre
	binary.BigEndian.PutUint32(chunk[17:], crc32.ChecksumIEEE(chunk[4:17]))
	out := make([]byte, 0, len(p)+len(chunk))
	out = append(out, p[:ihdrEnd]...)
	out = append(out, chunk...)
	return append(out, p[ihdrEnd:]...)
}
