package main

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // the sample pages
	"os"
	"path/filepath"
	"sort"
)

// samplePages lists the sample page images under dir (one folder per
// category), sorted, so every run sends the same pages.
func samplePages(dir string) ([]string, error) {
	var pages []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && filepath.Ext(p) == ".png" && filepath.Dir(p) != dir {
			pages = append(pages, p)
		}
		return nil
	})
	sort.Strings(pages)
	if err == nil && len(pages) == 0 {
		err = fmt.Errorf("no .png page under %s", dir)
	}
	return pages, err
}

// shrink scales img down (nearest neighbour) so its longer side is at most
// max pixels.
func shrink(img image.Image, max int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= max && h <= max {
		return img
	}
	scale := float64(max) / float64(w)
	if h > w {
		scale = float64(max) / float64(h)
	}
	nw, nh := int(float64(w)*scale), int(float64(h)*scale)
	out := image.NewRGBA(image.Rect(0, 0, nw, nh))
	for y := 0; y < nh; y++ {
		for x := 0; x < nw; x++ {
			out.Set(x, y, img.At(b.Min.X+int(float64(x)/scale), b.Min.Y+int(float64(y)/scale)))
		}
	}
	return out
}

// buildPDF writes a PDF with one page per image, each page an embedded JPEG
// (DCTDecode) of the image scaled to at most maxSide pixels, sized 1 px = 1
// pt. It is the multi-page document of the slow /predict_document request.
func buildPDF(images []string, maxSide int) ([]byte, error) {
	var objs [][]byte // object i+1
	add := func(b []byte) int { objs = append(objs, b); return len(objs) }
	// 1: catalog, 2: pages; filled in at the end.
	add(nil)
	add(nil)
	var kids []int
	for _, path := range images {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		img, _, err := image.Decode(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		img = shrink(img, maxSide)
		var jb bytes.Buffer
		if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 80}); err != nil {
			return nil, err
		}
		w, h := img.Bounds().Dx(), img.Bounds().Dy()
		var xo bytes.Buffer
		fmt.Fprintf(&xo, "<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n", w, h, jb.Len())
		xo.Write(jb.Bytes())
		xo.WriteString("\nendstream")
		imgObj := add(xo.Bytes())
		content := fmt.Sprintf("q %d 0 0 %d 0 0 cm /Im0 Do Q", w, h)
		cObj := add([]byte(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content)))
		page := add([]byte(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Resources << /XObject << /Im0 %d 0 R >> >> /Contents %d 0 R >>", w, h, imgObj, cObj)))
		kids = append(kids, page)
	}
	objs[0] = []byte("<< /Type /Catalog /Pages 2 0 R >>")
	var k bytes.Buffer
	for _, id := range kids {
		fmt.Fprintf(&k, "%d 0 R ", id)
	}
	objs[1] = []byte(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", k.String(), len(kids)))

	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n", i+1)
		out.Write(o)
		out.WriteString("\nendobj\n")
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return out.Bytes(), nil
}
