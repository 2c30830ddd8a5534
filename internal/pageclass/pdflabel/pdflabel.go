// Package pdflabel reads the page labels of a PDF (ISO 32000-1, 12.4.2):
// what a PDF reader shows as a page's number, such as "iv", "12a" or
// "A-3", beside its position in the file.
//
// It reads only what labels need: the document catalog's /PageLabels
// number tree and the objects it refers to. Objects are found by scanning
// the file for their definitions (and inside Flate-compressed object
// streams) rather than through the cross-reference table, so files whose
// table is damaged or out of date are still read; where an object is
// defined more than once the definition nearest the end of the file wins,
// as an incremental update intends. Work is bounded by the file's size and
// by MaxInflate bytes of decompressed object streams.
package pdflabel

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"

	"archivekit/internal/pageclass/pdfsyntax"
	"archivekit/internal/roman"
)

// MaxInflate bounds the bytes decompressed from object streams per file.
const MaxInflate = 64 << 20

// maxRanges bounds the label ranges read from the number tree.
const maxRanges = 1 << 16

// ErrEncrypted is returned for an encrypted PDF: its label prefixes are
// encrypted strings, which this package does not decrypt.
var ErrEncrypted = errors.New("the PDF is encrypted: its page labels are not read")

// Labels returns the label of each of the n pages of the PDF in data, or
// nil (and no error) when the document defines no page labels. A page
// before the first labelled range is labelled with its page number, as
// common readers do. An error says why the labels could not be read; the
// pages themselves may still be readable.
func Labels(data []byte, n int) ([]string, error) {
	f, err := Open(data)
	if err != nil {
		return nil, err
	}
	return f.Labels(n)
}

// File is a PDF whose objects are indexed once, for its page labels and
// its page tree (a decoder opening a PDF read and indexed it twice).
type File struct {
	r    *reader
	root pdfsyntax.Dict
}

// Open indexes the objects of the PDF in data and finds its catalog.
func Open(data []byte) (*File, error) {
	r, root, err := open(data)
	if err != nil {
		return nil, err
	}
	return &File{r: r, root: root}, nil
}

// Labels is the package's Labels of f.
func (f *File) Labels(n int) ([]string, error) {
	r, root := f.r, f.root
	tree, ok := r.resolve(root["PageLabels"]).(pdfsyntax.Dict)
	if !ok {
		return nil, nil
	}
	var rs []labelRange
	if err := r.walk(tree, 0, map[int]bool{}, &rs); err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, nil
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].start < rs[j].start })
	out := make([]string, n)
	k := -1
	for i := range out {
		for k+1 < len(rs) && rs[k+1].start <= i {
			k++
		}
		if k < 0 {
			out[i] = strconv.Itoa(i + 1)
			continue
		}
		out[i] = rs[k].label(i - rs[k].start)
	}
	return out, nil
}

// open indexes the objects of the PDF in data and finds its catalog.
func open(data []byte) (*reader, pdfsyntax.Dict, error) {
	if !bytes.HasPrefix(bytes.TrimLeft(data[:min(len(data), 1024)], "\x00\t\n\f\r "), []byte("%PDF-")) {
		return nil, nil, errors.New("not a PDF (no %PDF- header)")
	}
	r := &reader{data: data, objs: map[int]loc{}, budget: MaxInflate}
	r.index()
	root, err := r.catalog()
	if err != nil {
		return nil, nil, err
	}
	return r, root, nil
}

// labelRange is one entry of the number tree: from page start on, labels
// are prefix followed by the number first+offset in style.
type labelRange struct {
	start  int
	style  string // D, R, r, A, a, or "" (the prefix alone)
	prefix string
	first  int
}

func (lr labelRange) label(offset int) string {
	v := lr.first + offset
	switch lr.style {
	case "D":
		return lr.prefix + strconv.Itoa(v)
	case "R":
		return lr.prefix + roman.Format(v)
	case "r":
		return lr.prefix + strings.ToLower(roman.Format(v))
	case "A":
		return lr.prefix + letters(v)
	case "a":
		return lr.prefix + strings.ToLower(letters(v))
	}
	return lr.prefix
}

// letters writes v as the standard says: A to Z for 1 to 26, then AA to
// ZZ, then AAA to ZZZ, and so on.
func letters(v int) string {
	if v <= 0 {
		return strconv.Itoa(v)
	}
	c := byte('A' + (v-1)%26)
	return strings.Repeat(string(c), min((v-1)/26+1, 64))
}

// walk collects the ranges of a number-tree node and its kids.
func (r *reader) walk(node pdfsyntax.Dict, depth int, seen map[int]bool, out *[]labelRange) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("the page-label tree is deeper than %d levels", maxTreeDepth)
	}
	if nums, ok := r.resolve(node["Nums"]).(pdfsyntax.Array); ok {
		for i := 0; i+1 < len(nums); i += 2 {
			key, ok := number(r.resolve(nums[i]))
			if !ok || key < 0 || key != float64(int(key)) || key > 1<<30 {
				return fmt.Errorf("the page-label tree has a key %v that is not a page index", nums[i])
			}
			d, _ := r.resolve(nums[i+1]).(pdfsyntax.Dict)
			lr := labelRange{start: int(key), first: 1}
			if s, ok := r.resolve(d["S"]).(pdfsyntax.Name); ok {
				lr.style = string(s)
			}
			if p, ok := r.resolve(d["P"]).(pdfsyntax.String); ok {
				lr.prefix = textString(p)
			}
			if st, ok := number(r.resolve(d["St"])); ok && st >= 1 && st < 1<<30 {
				lr.first = int(st)
			}
			if len(*out) >= maxRanges {
				return fmt.Errorf("the page-label tree has more than %d ranges", maxRanges)
			}
			*out = append(*out, lr)
		}
	}
	kids, _ := r.resolve(node["Kids"]).(pdfsyntax.Array)
	for _, k := range kids {
		if rf, ok := k.(pdfsyntax.Ref); ok {
			if seen[rf.Num] {
				return errors.New("the page-label tree refers to itself")
			}
			seen[rf.Num] = true
		}
		if kid, ok := r.resolve(k).(pdfsyntax.Dict); ok {
			if err := r.walk(kid, depth+1, seen, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// loc is where an object is defined: at offset pos of the file, or as
// object idx of the object stream numbered stream (pos is then the
// stream's own offset, for the nearest-the-end rule).
type loc struct {
	pos, stream, idx int
	inStream         bool
}

type reader struct {
	data    []byte
	objs    map[int]loc
	streams map[int]*objStream
	budget  int
	// lost counts the object streams that could not be decoded (a
	// filter other than Flate, an encrypted or damaged stream): objects
	// they hold are not found.
	lost int
}

// objStream is a decoded object stream: its objects' numbers and their
// offsets in body.
type objStream struct {
	body       []byte
	nums, offs []int
}

var objDef = regexp.MustCompile(`(?:^|[\x00\t\n\f\r ])(\d{1,10})[\x00\t\n\f\r ]+(\d{1,5})[\x00\t\n\f\r ]+obj\b`)

// index finds every object definition of the file, then the objects of
// its object streams.
func (r *reader) index() {
	for _, m := range objDef.FindAllSubmatchIndex(r.data, -1) {
		num, err := strconv.Atoi(string(r.data[m[2]:m[3]]))
		if err != nil {
			continue
		}
		r.objs[num] = loc{pos: m[1]}
	}
	r.streams = map[int]*objStream{}
	type def struct{ num, pos int }
	var direct []def
	for num, l := range r.objs {
		direct = append(direct, def{num, l.pos})
	}
	sort.Slice(direct, func(i, j int) bool { return direct[i].pos < direct[j].pos })
	for _, d := range direct {
		st := r.objectStream(d.pos)
		if st == nil {
			continue
		}
		r.streams[d.num] = st
		for idx, num := range st.nums {
			if prev, ok := r.objs[num]; ok && prev.pos > d.pos {
				continue // defined again after this stream
			}
			r.objs[num] = loc{pos: d.pos, stream: d.num, idx: idx, inStream: true}
		}
	}
}

// objectStream decodes the object defined at pos if it is an object
// stream (/Type /ObjStm, Flate or no filter), within the budget.
func (r *reader) objectStream(pos int) *objStream {
	p := pdfsyntax.NewParser(r.data, pos)
	d, ok := p.Value().(pdfsyntax.Dict)
	if !ok || d["Type"] != pdfsyntax.Name("ObjStm") {
		return nil
	}
	p.Space()
	body, err := r.streamBody(p.Pos(), d)
	if err != nil {
		r.lost++
		return nil
	}
	n, _ := number(d["N"])
	first, _ := number(d["First"])
	if n <= 0 || n > 1<<20 || first < 0 || first > float64(len(body)) {
		r.lost++
		return nil
	}
	hp := pdfsyntax.NewParser(body[:int(first)], 0)
	nums, offs := make([]int, 0, int(n)), make([]int, 0, int(n))
	for i := 0; i < int(n); i++ {
		a, ok1 := number(hp.Value())
		b, ok2 := number(hp.Value())
		if !ok1 || !ok2 || b < 0 || first+b > float64(len(body)) {
			break
		}
		nums, offs = append(nums, int(a)), append(offs, int(first)+int(b))
	}
	return &objStream{body: body, nums: nums, offs: offs}
}

// streamBody reads the stream at pos of the file, after its dictionary d,
// and decompresses it when it is Flate-encoded.
func (r *reader) streamBody(pos int, d pdfsyntax.Dict) ([]byte, error) {
	data := r.data
	pos, ok := streamStart(data, pos)
	if !ok {
		return nil, errors.New("no stream")
	}
	end := -1
	if l, ok := number(r.resolve(d["Length"])); ok && l >= 0 && l <= float64(len(data)-pos) {
		end = pos + int(l)
	} else if i := bytes.Index(data[pos:], []byte("endstream")); i >= 0 {
		end = pos + i
	} else {
		return nil, errors.New("no endstream")
	}
	raw := data[pos:end]
	switch f := d["Filter"].(type) {
	case nil:
		return raw, nil
	case pdfsyntax.Name:
		if f == "FlateDecode" {
			return r.inflate(raw)
		}
	case pdfsyntax.Array:
		if len(f) == 1 && f[0] == pdfsyntax.Name("FlateDecode") {
			return r.inflate(raw)
		}
	}
	return nil, errors.New("a stream filter other than FlateDecode")
}

// number is the value of an integer or a real.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func (r *reader) inflate(raw []byte) ([]byte, error) {
	if r.budget <= 0 {
		return nil, errors.New("decompression budget spent")
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	b, err := io.ReadAll(io.LimitReader(zr, int64(r.budget)+1))
	r.budget -= len(b)
	if r.budget < 0 {
		return nil, errors.New("decompression budget spent")
	}
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return b, nil // a damaged tail: keep what inflated
	}
	return b, nil
}

// object returns object num (nil when it is not defined).
func (r *reader) object(num int) any {
	l, ok := r.objs[num]
	if !ok {
		return nil
	}
	if !l.inStream {
		return pdfsyntax.NewParser(r.data, l.pos).Value()
	}
	st := r.streams[l.stream]
	return pdfsyntax.NewParser(st.body, st.offs[l.idx]).Value()
}

// resolve follows references (at most 32 in a chain).
func (r *reader) resolve(v any) any {
	for i := 0; i < 32; i++ {
		rf, ok := v.(pdfsyntax.Ref)
		if !ok {
			return v
		}
		v = r.object(rf.Num)
	}
	return nil
}

// catalog finds the document catalog: the /Root of the last trailer or
// cross-reference stream, else the last object typed /Catalog.
func (r *reader) catalog() (pdfsyntax.Dict, error) {
	var trailer pdfsyntax.Dict
	if i := bytes.LastIndex(r.data, []byte("trailer")); i >= 0 {
		trailer, _ = pdfsyntax.NewParser(r.data, i+len("trailer")).Value().(pdfsyntax.Dict)
	}
	if trailer == nil || trailer["Root"] == nil {
		best := -1
		for num, l := range r.objs {
			if d, ok := r.object(num).(pdfsyntax.Dict); ok && d["Type"] == pdfsyntax.Name("XRef") && d["Root"] != nil && l.pos > best {
				trailer, best = d, l.pos
			}
		}
	}
	if trailer != nil && trailer["Encrypt"] != nil {
		return nil, ErrEncrypted
	}
	if trailer != nil {
		if root, ok := r.resolve(trailer["Root"]).(pdfsyntax.Dict); ok {
			return root, nil
		}
	}
	best := -1
	var root pdfsyntax.Dict
	for num, l := range r.objs {
		if d, ok := r.object(num).(pdfsyntax.Dict); ok && d["Type"] == pdfsyntax.Name("Catalog") && l.pos > best {
			root, best = d, l.pos
		}
	}
	if root == nil {
		return nil, errors.New("no document catalog found")
	}
	return root, nil
}

// textString decodes a PDF text string: UTF-16BE or UTF-8 with their byte
// order marks, else PDFDocEncoding.
func textString(s pdfsyntax.String) string {
	switch {
	case bytes.HasPrefix(s, []byte{0xFE, 0xFF}):
		u := make([]uint16, 0, len(s)/2)
		for i := 2; i+1 < len(s); i += 2 {
			u = append(u, uint16(s[i])<<8|uint16(s[i+1]))
		}
		return string(utf16.Decode(u))
	case bytes.HasPrefix(s, []byte{0xEF, 0xBB, 0xBF}):
		return strings.ToValidUTF8(string(s[3:]), "\uFFFD")
	}
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 0x80 && c <= 0xA0:
			b.WriteRune(pdfDoc[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// pdfDoc is PDFDocEncoding's 0x80–0xA0 (ISO 32000-1, Annex D); the rest
// of the encoding is Latin-1's.
var pdfDoc = [...]rune{
	'•', '†', '‡', '…', '—', '–', 'ƒ', '⁄', '‹', '›', '−', '‰', '„', '“', '”', '‘',
	'’', '‚', '™', 'ﬁ', 'ﬂ', 'Ł', 'Œ', 'Š', 'Ÿ', 'Ž', 'ı', 'ł', 'œ', 'š', 'ž', '\uFFFD',
	'€',
}
