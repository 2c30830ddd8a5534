package pdflabel

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"archivekit/internal/pageclass/pdfsyntax"
)

// A scanned page is mostly one JPEG image (an image XObject with the
// DCTDecode filter). When that JPEG is cut short, poppler and PDFium both
// draw what they have and fill the rest with grey, without an error, so the
// page would be classified from a part of it. PageJPEGs finds such images
// before rendering: JPEG data that does not begin with a start-of-image
// marker or has no end-of-image marker near its end.

// jpegTail is how far before the end of a JPEG stream (trailing white
// space and NULs aside) its end-of-image marker may be: some writers pad
// after it.
const jpegTail = 256

// JPEG is a JPEG image (an image XObject with DCTDecode) a page draws.
type JPEG struct {
	// Name is its resource name (without the slash).
	Name string
	// Data is its JPEG data as stored (a slice of the file), for a
	// caller to decode; nil under FlateDecode.
	Data []byte
	// Fault says what is wrong with it when its data is cut short or is
	// not JPEG ("" when neither).
	Fault string
}

// PageJPEGs returns the JPEG images each page (1-based) draws from its
// resources (its own or inherited), in resource-name order, and those its
// form XObjects draw from theirs (named "Fm1/Im1", forms within forms up to
// maxFormDepth deep); pages drawing none are absent. JPEG data under a
// filter other than FlateDecode is not listed. An error says the page tree
// cannot be followed (PageObjects).
func (f *File) PageJPEGs() (map[int][]JPEG, error) {
	out := map[int][]JPEG{}
	w := &pageWalk{r: f.r, seen: map[int]bool{}, page: func(num int, _ pdfsyntax.Dict, res any) {
		if js := f.r.resourceJPEGs(res, "", 0, map[int]bool{}); len(js) > 0 {
			out[num] = js
		}
	}}
	if err := f.walk(w); err != nil {
		return nil, err
	}
	return out, nil
}

// maxFormDepth bounds how deep PageJPEGs follows forms drawn by forms.
const maxFormDepth = 8

// resourceJPEGs lists the JPEG images of the resource dictionary res, and
// those of the forms it names (each form once: seen holds their object
// numbers), their names prefixed with prefix.
func (r *reader) resourceJPEGs(res any, prefix string, depth int, seen map[int]bool) []JPEG {
	rd, _ := r.resolve(res).(pdfsyntax.Dict)
	xo, _ := r.resolve(rd["XObject"]).(pdfsyntax.Dict)
	var out []JPEG
	for _, name := range slices.Sorted(maps.Keys(xo)) {
		if j, ok := r.jpeg(xo[name]); ok {
			j.Name = prefix + name
			out = append(out, j)
			continue
		}
		if d, _, num, ok := r.streamAt(xo[name]); ok && d["Subtype"] == pdfsyntax.Name("Form") && !seen[num] && depth < maxFormDepth {
			seen[num] = true
			out = append(out, r.resourceJPEGs(d["Resources"], prefix+name+"/", depth+1, seen)...)
		}
	}
	return out
}

// streamAt is the dictionary of the stream object v refers to, a parser
// placed after it, and the object's number; false when v is no reference
// to a dictionary object in the file's body (a stream is never inside an
// object stream).
func (r *reader) streamAt(v any) (pdfsyntax.Dict, *pdfsyntax.Parser, int, bool) {
	rf, ok := v.(pdfsyntax.Ref)
	if !ok {
		return nil, nil, 0, false
	}
	l, ok := r.objs[rf.Num]
	if !ok || l.inStream {
		return nil, nil, 0, false
	}
	p := pdfsyntax.NewParser(r.data, l.pos)
	d, ok := p.Value().(pdfsyntax.Dict)
	return d, p, rf.Num, ok
}

// CutPages returns, for each page (1-based) of pages (PageJPEGs) that
// draws an image whose JPEG data is cut short or not JPEG, the image's
// resource name and what is wrong (the first such image of the page); nil
// when there is none.
func CutPages(pages map[int][]JPEG) map[int]string {
	var cut map[int]string
	for num, js := range pages {
		for _, j := range js {
			if j.Fault != "" {
				if cut == nil {
					cut = map[int]string{}
				}
				cut[num] = fmt.Sprintf("its image /%s %s", j.Name, j.Fault)
				break
			}
		}
	}
	return cut
}

// jpeg reads the image XObject v when it is a JPEG (DCTDecode, alone or
// after FlateDecode); false when it is not, or cannot be read here.
func (r *reader) jpeg(v any) (JPEG, bool) {
	d, p, _, ok := r.streamAt(v)
	if !ok || d["Subtype"] != pdfsyntax.Name("Image") {
		return JPEG{}, false
	}
	var flate bool
	switch fl := d["Filter"].(type) {
	case pdfsyntax.Name:
		if fl != "DCTDecode" {
			return JPEG{}, false
		}
	case pdfsyntax.Array:
		switch {
		case len(fl) == 1 && fl[0] == pdfsyntax.Name("DCTDecode"):
		case len(fl) == 2 && fl[0] == pdfsyntax.Name("FlateDecode") && fl[1] == pdfsyntax.Name("DCTDecode"):
			flate = true
		default:
			return JPEG{}, false
		}
	default:
		return JPEG{}, false
	}
	p.Space()
	bodies := r.rawStreams(p.Pos(), d)
	if len(bodies) == 0 {
		return JPEG{}, false
	}
	var j JPEG
	for _, b := range bodies {
		if flate {
			var err error
			if b, err = r.inflate(b); err != nil {
				return JPEG{}, false // not read here: the renderer says
			}
		}
		if j.Fault = jpegFault(b); j.Fault == "" {
			if !flate {
				j.Data = b
			}
			return j, true
		}
	}
	return j, true
}

// jpegFault says what is wrong with JPEG data b: no start-of-image
// marker, or no end-of-image marker near its end; "" when neither.
func jpegFault(b []byte) string {
	if !bytes.HasPrefix(b, []byte{0xFF, 0xD8}) {
		return "is not JPEG data (no start-of-image marker)"
	}
	b = bytes.TrimRight(b, "\x00\t\n\f\r ")
	tail := b[max(len(b)-jpegTail, 2):]
	if !bytes.Contains(tail, []byte{0xFF, 0xD9}) {
		return "is JPEG data cut short (no end-of-image marker): it would be drawn in part"
	}
	return ""
}

// rawStreams are the undecoded bodies the stream at pos (after its
// dictionary d) may have: up to its /Length, and up to the next
// endstream when that differs (a wrong /Length is common).
func (r *reader) rawStreams(pos int, d pdfsyntax.Dict) [][]byte {
	start, ok := streamStart(r.data, pos)
	if !ok {
		return nil
	}
	var out [][]byte
	if l, ok := number(r.resolve(d["Length"])); ok && l >= 0 && l <= float64(len(r.data)-start) {
		out = append(out, r.data[start:start+int(l)])
	}
	if i := bytes.Index(r.data[start:], []byte("endstream")); i >= 0 && (len(out) == 0 || i != len(out[0])) {
		out = append(out, r.data[start:start+i])
	}
	return out
}

// streamStart is the offset of the first byte of the stream whose keyword
// is at pos; false when there is no stream keyword there.
func streamStart(data []byte, pos int) (int, bool) {
	if !bytes.HasPrefix(data[pos:], []byte("stream")) {
		return 0, false
	}
	pos += len("stream")
	if bytes.HasPrefix(data[pos:], []byte("\r\n")) {
		pos += 2
	} else if pos < len(data) && (data[pos] == '\n' || data[pos] == '\r') {
		pos++
	}
	return pos, true
}
