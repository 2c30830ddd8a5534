package imageio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/davidbyttow/govips/v2/vips"
)

// jp2Of is the page img written as a JPEG 2000 file (the JP2 format) by
// libvips, lossless or not, its colour samples at full resolution (as
// archives' masters are: Debian 12's libvips refuses a JPEG 2000 with
// subsampled chroma, "components differ in geometry").
func jp2Of(t testing.TB, pngData []byte, lossless bool) []byte {
	t.Helper()
	return convert(t, pngData, vips.InterpretationError, func(ref *vips.ImageRef) ([]byte, *vips.ImageMetadata, error) {
		p := vips.NewJp2kExportParams()
		p.Lossless, p.Quality, p.SubsampleMode = lossless, 80, vips.VipsForeignSubsampleOff
		return ref.ExportJp2k(p)
	})
}

// codestreamOf is the bare JPEG 2000 codestream inside a JP2 file: the
// content of its contiguous codestream box ("jp2c", ISO/IEC 15444-1
// I.5.4), what a .j2k file holds.
func codestreamOf(t testing.TB, jp2 []byte) []byte {
	t.Helper()
	for at := 0; at+8 <= len(jp2); {
		n, typ := int(binary.BigEndian.Uint32(jp2[at:])), string(jp2[at+4:at+8])
		end := at + n
		if n == 0 {
			end = len(jp2)
		}
		if n == 1 || (n != 0 && n < 8) || end > len(jp2) {
			t.Fatalf("JP2 box %q at %d: length %d not handled here", typ, at, n)
		}
		if typ == "jp2c" {
			return jp2[at+8 : end]
		}
		at = end
	}
	t.Fatal("no codestream box in the JP2 file")
	return nil
}

// A JPEG 2000 page (the masters of Europeana's and many libraries' books,
// and what IIIF image servers keep) is read by its content whatever its
// name: a lossless one gives exactly the pixels of the page it was made
// from, a lossy one nearly; a large one is shrunk within the decode budget
// as the other formats are; a broken one is refused naming the file.
func TestJPEG2000(t *testing.T) {
	var page bytes.Buffer
	if err := png.Encode(&page, textPage(620, 877, 75)); err != nil {
		t.Fatal(err)
	}
	want := decodeOne(t, DefaultOptions, page.Bytes(), "page.png")
	lossless := jp2Of(t, page.Bytes(), true)
	if got := Sniff(lossless[:SniffLen]); got != ".jp2" {
		t.Fatalf("Sniff: %q, want .jp2", got)
	}
	if !Supported("scan.JP2") {
		t.Error(".jp2 is not among the extensions collected")
	}
	got := decodeOne(t, DefaultOptions, lossless, "0001.png") // the name does not decide
	if got.W != want.W || got.H != want.H || !bytes.Equal(got.Pix, want.Pix) {
		t.Errorf("lossless JPEG 2000: %d×%d, differs from the page (%d×%d)", got.W, got.H, want.W, want.H)
	}
	// A bare codestream (.j2k) is the same page, read by its markers
	// whatever its name.
	cs := codestreamOf(t, lossless)
	if got := Sniff(cs[:SniffLen]); got != ".j2k" {
		t.Errorf("Sniff of a codestream: %q, want .j2k", got)
	}
	if !Supported("scan.J2K") || !Supported("scan.j2c") {
		t.Error(".j2k or .j2c is not among the extensions collected")
	}
	if got := decodeOne(t, DefaultOptions, cs, "0001"); got.W != want.W || got.H != want.H || !bytes.Equal(got.Pix, want.Pix) {
		t.Errorf("lossless codestream: %d×%d, differs from the page (%d×%d)", got.W, got.H, want.W, want.H)
	}
	lossy := decodeOne(t, DefaultOptions, jp2Of(t, page.Bytes(), false), "lossy.jp2")
	if d := meanGrey(lossy) - meanGrey(want); d > 2 || d < -2 {
		t.Errorf("lossy JPEG 2000: mean grey %.1f off the page's", d)
	}
	// Over the budget it is shrunk as the PNG is (libvips 8.14's
	// thumbnail of a JPEG 2000 under SizeDown gave 78×110 here).
	small := DefaultOptions
	small.MaxDecodePixels = 300 * 430
	shrunk, ref := decodeOne(t, small, lossless, "page.jp2"), decodeOne(t, small, page.Bytes(), "page.png")
	if shrunk.W*shrunk.H > 300*430 || shrunk.W < ref.W-2 || shrunk.H < ref.H-2 {
		t.Errorf("JPEG 2000 over the decode budget: %d×%d, the PNG %d×%d", shrunk.W, shrunk.H, ref.W, ref.H)
	}
	if d := meanGrey(shrunk) - meanGrey(ref); d > 2 || d < -2 {
		t.Errorf("JPEG 2000 over the decode budget: mean grey %.1f off the PNG's", d)
	}
	if shrunk := decodeOne(t, small, cs, "page.j2k"); shrunk.W*shrunk.H > 300*430 || shrunk.W < ref.W-2 || shrunk.H < ref.H-2 {
		t.Errorf("codestream over the decode budget: %d×%d, the PNG %d×%d", shrunk.W, shrunk.H, ref.W, ref.H)
	}
	for name, broken := range map[string][]byte{
		"broken.jp2": lossless[:len(lossless)/3],
		"broken.j2k": cs[:len(cs)/3],
	} {
		_, err := decodeErr(DefaultOptions, broken, name)
		var e *Error
		if err == nil || !errors.As(err, &e) || e.Name != name {
			t.Errorf("a truncated JPEG 2000 (%s): %v", name, err)
		}
	}
}

// decodeOne decodes data's first page with o.
func decodeOne(t *testing.T, o Options, data []byte, name string) Image {
	t.Helper()
	img, err := decodeErr(o, data, name)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// decodeErr decodes data's first page with o, or says why it cannot.
func decodeErr(o Options, data []byte, name string) (Image, error) {
	doc, err := o.Decode(data, name)
	if err != nil {
		return Image{}, err
	}
	return doc.Page(0)
}

// colourBars is a page of eight colour bars, w×h: chroma that a decoder
// left in YCbCr changes beyond any compression loss.
func colourBars(w, h int) *image.RGBA {
	bars := []color.RGBA{{235, 235, 235, 255}, {235, 235, 16, 255}, {16, 235, 235, 255}, {16, 235, 16, 255},
		{235, 16, 235, 255}, {235, 16, 16, 255}, {16, 16, 235, 255}, {16, 16, 16, 255}}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, bars[x*len(bars)/w])
		}
	}
	return img
}

// TestJPEG2000Refused: JPEG 2000 files that Debian 12's libvips 8.14 reads
// with wrong pixels and no error are refused before decoding, naming the
// file and the reason; the YCbCr one it reads right (4:2:0) is read, as a
// JP2 file and as a bare codestream. Found on OpenJPEG's and Pillow's test
// images (zoo2.jp2: the page's top-left quarter stretched; file2.jp2: a
// photograph in YCbCr values shown as RGB; p0_02.j2k: uninitialised
// memory; Bretagne1_ht.j2k, HTJ2K: every sample 128; p0_03.j2k, signed
// samples: black; issue205.jp2, CMYK: inverted), compared with OpenJPEG's
// own decoder (docs/pageclass.md).
func TestJPEG2000Refused(t *testing.T) {
	var page bytes.Buffer
	if err := png.Encode(&page, colourBars(256, 96)); err != nil {
		t.Fatal(err)
	}
	want := decodeOne(t, DefaultOptions, page.Bytes(), "bars.png")
	ycc420 := convert(t, page.Bytes(), vips.InterpretationError, func(ref *vips.ImageRef) ([]byte, *vips.ImageMetadata, error) {
		p := vips.NewJp2kExportParams()
		p.Lossless, p.Quality, p.SubsampleMode = false, 90, vips.VipsForeignSubsampleOn
		return ref.ExportJp2k(p)
	})
	if space, ok := jp2Enumerated(ycc420); !ok || space != 18 {
		t.Fatal("libvips' chroma-subsampled JP2 does not declare sYCC")
	}
	for name, data := range map[string][]byte{"bars420.jp2": ycc420, "bars420.j2k": codestreamOf(t, ycc420)} {
		got := decodeOne(t, DefaultOptions, data, name)
		if got.W != want.W || got.H != want.H {
			t.Fatalf("%s: %d×%d, want %d×%d", name, got.W, got.H, want.W, want.H)
		}
		if d := meanAbsDiff(got, want); d > 6 {
			t.Errorf("%s: mean difference %.1f from the page's samples (YCbCr read as RGB?)", name, d)
		}
	}

	rgb := jp2Of(t, page.Bytes(), true)
	at := bytes.Index(rgb, []byte("colr")) + 4
	if at < 4 || rgb[at] != 1 {
		t.Fatal("no enumerated colr box")
	}
	ycc444 := bytes.Clone(rgb)
	binary.BigEndian.PutUint32(ycc444[at+3:], 18) // sYCC, no subsampling
	cs := codestreamOf(t, rgb)
	siz := bytes.Index(rgb, cs) + 4 + 2 + 2 + 8*4 + 2 // the first component's Ssiz
	firstSub := bytes.Clone(rgb)
	firstSub[siz+1], firstSub[siz+2] = 2, 2 // XRsiz, YRsiz of the first component
	// A bare codestream of three components, the second and third
	// subsampled 2×1 (4:2:2), is taken for YCbCr, as OpenJPEG's own
	// decoder takes it (its issue142.j2k, colour bars, is one).
	cs422 := []byte{0xff, 0x4f, 0xff, 0x51, 0, 47, 0, 0, 0, 0, 0, 64, 0, 0, 0, 32}
	cs422 = append(cs422, make([]byte, 24)...)
	cs422 = append(cs422, 0, 3, 7, 1, 1, 7, 2, 1, 7, 2, 1)
	// High-Throughput block coding, declared by a CAP marker (Part 15 in
	// Pcap) after SIZ, or by the HT bit of COD's code-block style.
	sizEnd := 4 + int(binary.BigEndian.Uint16(cs[4:])) // SOC, the SIZ marker and its Lsiz bytes
	capped := append(append(bytes.Clone(cs[:sizEnd]), 0xff, 0x50, 0, 8, 0, 2, 0, 0, 0, 0), cs[sizEnd:]...)
	htCOD := bytes.Clone(cs)
	cod := bytes.Index(htCOD, []byte{0xff, 0x52})
	if cod < 0 {
		t.Fatal("no COD marker")
	}
	htCOD[cod+12] |= 0x40
	cmyk, lab := bytes.Clone(rgb), bytes.Clone(rgb)
	binary.BigEndian.PutUint32(cmyk[at+3:], 12)
	binary.BigEndian.PutUint32(lab[at+3:], 14)
	// A colr box holding an ICC profile (method 2) whose header says CMYK.
	profile := make([]byte, 128)
	copy(profile[16:], "CMYK")
	copy(profile[36:], "acsp")
	cmykICC := withColr(t, rgb, append([]byte{2, 0, 0}, profile...))
	// A bare codestream of four components, the third and fourth
	// subsampled 2×2 (OpenJPEG's p1_03.j2k is one).
	cs4 := []byte{0xff, 0x4f, 0xff, 0x51, 0, 50, 0, 0, 0, 0, 0, 64, 0, 0, 0, 32}
	cs4 = append(cs4, make([]byte, 24)...)
	cs4 = append(cs4, 0, 4, 7, 1, 1, 7, 1, 1, 7, 2, 2, 7, 2, 2)
	signed := bytes.Clone(rgb)
	for c := range 3 {
		signed[siz+3*c] |= 0x80 // each component's Ssiz: signed
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"cmyk.jp2", cmyk, "colour space CMYK (enumerated 12)"},
		{"lab.jp2", lab, "colour space CIELab (enumerated 14)"},
		{"cmyk-icc.jp2", cmykICC, `ICC profile of the colour space "CMYK"`},
		{"four-sub.j2k", cs4, "JPEG 2000 of 4 components, component 3 subsampled (one sample every 2×2 pixels)"},
		{"signed.jp2", signed, "signed 8-bit samples are not read"},
		{"signed.j2k", codestreamOf(t, signed), "signed 8-bit samples are not read"},
		{"ht-cap.j2k", capped, "High-Throughput JPEG 2000"},
		{"ht-cod.j2k", htCOD, "High-Throughput JPEG 2000"},
		{"ycc444.jp2", ycc444, "YCbCr colour (sYCC) other than 4:2:0"},
		{"ycc422.j2k", cs422, "YCbCr colour (sYCC) other than 4:2:0"},
		{"firstsub.jp2", firstSub, "first component is subsampled (one sample every 2×2 pixels)"},
		{"firstsub.j2k", codestreamOf(t, firstSub), "first component is subsampled"},
	} {
		_, err := decodeErr(DefaultOptions, tc.data, tc.name)
		var e *Error
		if !errors.As(err, &e) || e.Name != tc.name || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.want)
		}
	}
	// The same refusals in a decoder process.
	iso := DefaultOptions
	iso.Isolation = isolation(t, 1, 0)
	if _, err := iso.Decode(ycc444, "ycc444.jp2"); err == nil || !strings.Contains(err.Error(), "sYCC") {
		t.Errorf("in a decoder process: %v", err)
	}
}

// TestJPEG2000OneComponentMCT: a greyscale JPEG 2000 whose COD marker asks
// for a multiple component transform (OpenJPEG's 123.j2c, bug.j2c and
// illegalcolortransform.j2k, 16-bit X-rays) is read whole. OpenJPEG skips
// the transform and reports an error; libvips 8.14 then decoded no further
// tile and returned the rest of the page black, with no error.
func TestJPEG2000OneComponentMCT(t *testing.T) {
	var page bytes.Buffer
	if err := png.Encode(&page, textPage(1200, 900, 75)); err != nil {
		t.Fatal(err)
	}
	want := decodeOne(t, DefaultOptions, page.Bytes(), "page.png")
	grey := convert(t, page.Bytes(), vips.InterpretationBW, func(ref *vips.ImageRef) ([]byte, *vips.ImageMetadata, error) {
		p := vips.NewJp2kExportParams()
		p.Lossless, p.SubsampleMode = true, vips.VipsForeignSubsampleOff
		return ref.ExportJp2k(p)
	})
	cs := jp2Codestream(grey)
	if steps, ok := sizSampling(cs); !ok || len(steps) != 1 {
		t.Fatalf("not a one-component codestream: %v", steps)
	}
	cod := bytes.Index(cs, []byte{0xff, 0x52})
	if cod < 0 || cs[cod+8] != 0 {
		t.Fatal("no COD marker without a transform")
	}
	withMCT := bytes.Clone(grey)
	withMCT[len(grey)-len(cs)+cod+8] = 1
	// Each is compared with the same container without the flag (a bare
	// codestream is wrapped with an enumerated greyscale, libvips' own JP2
	// carries its ICC profile).
	for _, c := range []struct{ name, plain, mct []byte }{
		{[]byte("mct.jp2"), grey, withMCT},
		{[]byte("mct.j2k"), codestreamOf(t, grey), codestreamOf(t, withMCT)},
	} {
		name := string(c.name)
		ref := decodeOne(t, DefaultOptions, c.plain, name)
		if d := meanAbsDiff(ref, want); d > 4 {
			t.Fatalf("%s without the flag: mean difference %.1f from the page", name, d)
		}
		for _, mode := range []string{"in process", "in a decoder process"} {
			o := DefaultOptions
			if mode != "in process" {
				o.Isolation = isolation(t, 1, 0)
			}
			got := decodeOne(t, o, c.mct, name)
			if got.W != ref.W || got.H != ref.H || !bytes.Equal(got.Pix, ref.Pix) {
				t.Errorf("%s %s: %d×%d, differs from the file without the flag (mean difference %.1f)", name, mode, got.W, got.H, meanAbsDiff(got, ref))
			}
		}
	}
	if prepared, err := jp2Prepared(grey); err != nil || !bytes.Equal(prepared, grey) {
		t.Error("a file without the transform flag was changed")
	}
}

// TestSampleFormats: a page of 8- or 16-bit unsigned samples is read; one
// of signed, 32-bit or floating-point samples is refused, naming the
// file and the kind, where libvips 8.14 clipped it to 8 bits (Pillow's
// 8bit.s.tif came out posterised, 16bit.s.tif nearly black).
func TestSampleFormats(t *testing.T) {
	var page bytes.Buffer
	if err := png.Encode(&page, textPage(120, 90, 75)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		format vips.BandFormat
		want   string // "": read
	}{
		{vips.BandFormatUchar, ""},
		{vips.BandFormatUshort, ""},
		{vips.BandFormatChar, "signed 8-bit samples are not read"},
		{vips.BandFormatShort, "signed 16-bit samples are not read"},
		{vips.BandFormatUint, "unsigned 32-bit samples are not read"},
		{vips.BandFormatFloat, "32-bit floating-point samples are not read"},
	} {
		tiff := convert(t, page.Bytes(), vips.InterpretationBW, func(ref *vips.ImageRef) ([]byte, *vips.ImageMetadata, error) {
			if err := ref.Cast(tc.format); err != nil {
				return nil, nil, err
			}
			return ref.ExportTiff(vips.NewTiffExportParams())
		})
		name := fmt.Sprintf("format%d.tif", tc.format)
		_, err := decodeErr(DefaultOptions, tiff, name)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), name)):
			t.Errorf("%s: %v, want an error naming it and saying %q", name, err, tc.want)
		}
	}
}

// withColr is the JP2 file data with the content of its colr box replaced
// by colr (the jp2h box rebuilt around it).
func withColr(t *testing.T, data, colr []byte) []byte {
	t.Helper()
	var out []byte
	found := false
	eachBox(data, func(typ string, content []byte, whole bool) bool {
		if typ != "jp2h" {
			out = append(out, box(typ, content)...)
			return false
		}
		var header []byte
		eachBox(content, func(typ string, c []byte, whole bool) bool {
			if typ == "colr" {
				c, found = colr, true
			}
			header = append(header, box(typ, c)...)
			return false
		})
		out = append(out, box("jp2h", header)...)
		return false
	})
	if !found {
		t.Fatal("no colr box")
	}
	return out
}
