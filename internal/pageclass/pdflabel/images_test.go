package pdflabel

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/jpeg"
	"strings"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"
)

// TestCutImages: a page drawing a JPEG cut short, or data that is not
// JPEG, is named with its image; whole JPEGs are not, with padding after
// them, a wrong /Length, or under FlateDecode too.
func TestCutImages(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 120, 160))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	whole := jb.String()
	cut := whole[:len(whole)*6/10]
	flated := func(s string) string {
		var b bytes.Buffer
		zw := zlib.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return b.String()
	}
	xobj := func(filter, data string, length int) string {
		return fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width 120 /Height 160 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter %s /Length %d >>\nstream\n%s\nendstream", filter, length, data)
	}
	objs, err := hostile.ScanPDFObjects([]image.Image{img, img, img}, 150, "")
	if err != nil {
		t.Fatal(err)
	}
	// Page 2's image is object 9 (ScanPDFObjects: page, content, image).
	with := func(num int, obj string) []byte {
		o := append([]string(nil), objs...)
		o[num-1] = obj
		return hostile.PDFObjects(o...)
	}
	inherited := append([]string(nil), objs...)
	for k := range inherited {
		inherited[k] = strings.Replace(inherited[k], "/Resources << /XObject << /Im1 ", "/Foo << /XObject << /Im1 ", 1)
	}
	inherited[1] = strings.Replace(objs[1], "/Count 3", "/Count 3 /Resources << /XObject << /Im1 9 0 R >> >>", 1)
	inherited[8] = xobj("/DCTDecode", cut, len(cut))
	// Page 2 draws its image through a form (object n+1, after the n of
	// ScanPDFObjects), or a form drawing that form (n+2), or a form
	// drawing itself.
	n := len(objs)
	form := func(res string) string {
		return "<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << " + res + " >> >> /Length 8 >>\nstream\n/Im1 Do\nendstream"
	}
	viaForm := func(image string, forms ...string) []byte {
		o := append([]string(nil), objs...)
		o[6] = strings.Replace(o[6], "/XObject << /Im1 9 0 R >>", fmt.Sprintf("/XObject << /Fm1 %d 0 R >>", n+len(forms)), 1)
		o[8] = image
		return hostile.PDFObjects(append(o, forms...)...)
	}
	for _, tc := range []struct {
		name string
		pdf  []byte
		want map[int]string
	}{
		{"through a form, whole", viaForm(objs[8], form("/Im1 9 0 R")), nil},
		{"through a form, cut", viaForm(xobj("/DCTDecode", cut, len(cut)), form("/Im1 9 0 R")), map[int]string{2: "/Fm1/Im1 is JPEG data cut short"}},
		{"through a form in a form, cut", viaForm(xobj("/DCTDecode", cut, len(cut)), form("/Im1 9 0 R"), form(fmt.Sprintf("/Fm2 %d 0 R", n+1))), map[int]string{2: "/Fm1/Fm2/Im1 is JPEG"}},
		{"a form drawing itself, and the cut image", viaForm(xobj("/DCTDecode", cut, len(cut)), form(fmt.Sprintf("/Fm1 %d 0 R /Im1 9 0 R", n+1))), map[int]string{2: "/Fm1/Im1 is JPEG"}},
		{"whole", hostile.PDFObjects(objs...), nil},
		{"page 2 cut", with(9, xobj("/DCTDecode", cut, len(cut))), map[int]string{2: "cut short"}},
		{"page 2 cut, filter in an array", with(9, xobj("[/DCTDecode]", cut, len(cut))), map[int]string{2: "cut short"}},
		{"page 2 not JPEG", with(9, xobj("/DCTDecode", "plain text, no image", 20)), map[int]string{2: "not JPEG"}},
		{"padded after the end", with(9, xobj("/DCTDecode", whole+"\x00\x00\r\n  ", len(whole)+6)), nil},
		{"a /Length too short", with(9, xobj("/DCTDecode", whole, len(whole)/2)), nil},
		{"under FlateDecode, whole", with(9, xobj("[/FlateDecode /DCTDecode]", flated(whole), len(flated(whole)))), nil},
		{"under FlateDecode, cut", with(9, xobj("[/FlateDecode /DCTDecode]", flated(cut), len(flated(cut)))), map[int]string{2: "cut short"}},
		{"other filter", with(9, xobj("/JPXDecode", cut, len(cut))), nil},
		{"resources inherited", hostile.PDFObjects(inherited...), map[int]string{1: "cut short", 2: "cut short", 3: "cut short"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Open(tc.pdf)
			if err != nil {
				t.Fatal(err)
			}
			pages, err := f.PageJPEGs()
			if err != nil {
				t.Fatal(err)
			}
			got := CutPages(pages)
			if len(got) != len(tc.want) {
				t.Fatalf("CutPages = %v, want pages %v", got, tc.want)
			}
			for page, why := range tc.want {
				if !strings.Contains(got[page], why) || !strings.Contains(got[page], "/Im1") {
					t.Errorf("page %d: %q, want the image named and %q", page, got[page], why)
				}
			}
		})
	}
}
