package bookout

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"archivekit/internal/atomicfile"
)

// IIIF Presentation 3 and W3C Web Annotation terms used here.
const (
	presentation3Context = "http://iiif.io/api/presentation/3/context.json"
	// ALTOFormat is the media type of the translated ALTO in seeAlso
	// (mirador-textoverlay takes it, as it takes application/xml+alto).
	ALTOFormat = "application/alto+xml"
	// ALTOProfilePrefix starts every ALTO profile URI (the ALTO
	// namespaces "http://www.loc.gov/standards/alto/ns-v4#" and schema
	// locations alike); viewers match an ALTO seeAlso by it.
	ALTOProfilePrefix = "http://www.loc.gov/standards/alto/"
	// PAGEFormat is the media type of a translated PAGE-XML file (its
	// profile is its namespace URI).
	PAGEFormat = "application/vnd.prima.page+xml"
	// HOCRFormat and HOCRProfile are the media type and profile of a
	// translated hOCR file (viewers match an hOCR seeAlso by either).
	HOCRFormat  = "text/vnd.hocr+html"
	HOCRProfile = "http://kba.cloud/hocr-spec/1.2/"
)

// Box is a region of a canvas in canvas coordinates.
type Box struct{ X, Y, W, H float64 }

// Scale maps b from a page of fromW × fromH (ALTO Page WIDTH/HEIGHT, the
// image PAGE-XML describes) onto a canvas of toW × toH; sizes of 0 leave
// b as it is.
func (b Box) Scale(fromW, fromH, toW, toH float64) Box {
	sx, sy := factors(fromW, fromH, toW, toH)
	return Box{b.X * sx, b.Y * sy, b.W * sx, b.H * sy}
}

// factors are the scale factors from a page of fromW × fromH onto a
// canvas of toW × toH (1 and 1 when a size is not given).
func factors(fromW, fromH, toW, toH float64) (sx, sy float64) {
	if fromW <= 0 || fromH <= 0 || toW <= 0 || toH <= 0 {
		return 1, 1
	}
	return toW / fromW, toH / fromH
}

// Point is a vertex of a line's outline.
type Point struct{ X, Y float64 }

// ParsePoints parses a line's polygon: PAGE-XML's Coords points and ALTO's
// PointsType, one reader for both. ALTO's schema (up to 4.4) leaves it a
// string; 4.4's documentation names the two forms in use, which
// ParsePoints takes: "x1,y1 x2,y2 ..." (recommended; PAGE-XML's form) and
// "x1 y1 x2 y2 ..." (kept for compatibility: Kraken and eScriptorium
// write it). Both are whitespace-separated; in the first each field is one
// pair, in the second each field one number, and a value mixing them is
// refused. ok is false for an empty value, an odd count of numbers, or a
// number that does not parse or is not finite.
func ParsePoints(s string) (pts []Point, ok bool) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, false
	}
	pairs := strings.Contains(fields[0], ",")
	var nums []float64
	for _, f := range fields {
		parts := []string{f}
		if pairs {
			x, y, ok := strings.Cut(f, ",")
			if !ok {
				return nil, false
			}
			parts = []string{x, y}
		}
		for _, p := range parts {
			v, err := strconv.ParseFloat(p, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, false
			}
			nums = append(nums, v)
		}
	}
	if len(nums)%2 != 0 {
		return nil, false
	}
	for i := 0; i < len(nums); i += 2 {
		pts = append(pts, Point{X: nums[i], Y: nums[i+1]})
	}
	return pts, true
}

// Outline returns the bounding box of the polygon pts (nil when it has
// no positive width and height) and the polygon itself when it is not
// that box (nil for an axis-aligned rectangle: one whose area is its
// box's, whatever the number and order of its points).
func Outline(pts []Point) (*Box, []Point) {
	if len(pts) == 0 {
		return nil, nil
	}
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	area := 0.0
	for i, p := range pts {
		x0, y0, x1, y1 = math.Min(x0, p.X), math.Min(y0, p.Y), math.Max(x1, p.X), math.Max(y1, p.Y)
		q := pts[(i+1)%len(pts)]
		area += p.X*q.Y - q.X*p.Y // the shoelace formula, twice the signed area
	}
	if !(x1 > x0 && y1 > y0) {
		return nil, nil
	}
	box := &Box{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
	if math.Abs(area)/2 >= box.W*box.H*(1-1e-9) {
		return box, nil
	}
	return box, pts
}

// svg is the SVG Selector value of the polygon pts: one closed path
// element ("M x,y L x,y … Z"), its points in canvas units to two decimals,
// without style. A path, not a polygon element: Mirador (3 and 4) draws
// and hit-tests an SvgSelector's path elements only.
func svg(pts []Point) string {
	var b strings.Builder
	b.WriteString("<svg xmlns='http://www.w3.org/2000/svg'><path d='")
	command := "M"
	for _, p := range pts {
		b.WriteString(command + coord(p.X) + "," + coord(p.Y))
		command = " L"
	}
	b.WriteString(" Z'/></svg>")
	return b.String()
}

func coord(v float64) string {
	r := math.Round(v*100) / 100
	if r == 0 {
		r = 0 // not "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// fragment is the Media Fragments selector of b: xywh=x,y,w,h in whole
// canvas units (rounded outwards, at least 1 wide and high).
func (b Box) fragment() string {
	x, y := math.Floor(b.X), math.Floor(b.Y)
	w, h := math.Max(1, math.Ceil(b.X+b.W)-x), math.Max(1, math.Ceil(b.Y+b.H)-y)
	return "xywh=" + strconv.Itoa(int(math.Max(0, x))) + "," + strconv.Itoa(int(math.Max(0, y))) + "," + strconv.Itoa(int(w)) + "," + strconv.Itoa(int(h))
}

// TextLine is a translated line and where it is on the canvas (nil: the
// whole canvas).
type TextLine struct {
	Text string
	// ID is the line's identifier in its file (ALTO TextLine ID, PAGE-XML
	// TextLine id, hOCR ocr_line id); "" when it has none.
	ID string
	// Language is the BCP 47 tag of Text when it is not the annotation
	// page's (a line translated from another language, or left in its
	// own); "" for the page's.
	Language string
	Box      *Box
	// Polygon is the line's outline when it is not Box (a PAGE-XML Coords
	// or ALTO Shape/Polygon polygon that is not an axis-aligned rectangle:
	// see Outline), in the units of Box; nil when Box is the outline.
	Polygon []Point
}

// OCRPage is a page of an OCR file (an ALTO Page, a PAGE-XML Page, an
// hOCR ocr_page): its size in the file's own units (0 when not given) and
// its lines in document order, their boxes in those units (nil: the line
// has no usable box).
type OCRPage struct {
	Width, Height float64
	Lines         []TextLine
}

// OnCanvas returns the lines of pages with their boxes and polygons
// scaled from each page onto a canvas of w × h (Box.Scale).
func OnCanvas(pages []OCRPage, w, h float64) []TextLine {
	var lines []TextLine
	for _, pg := range pages {
		sx, sy := factors(pg.Width, pg.Height, w, h)
		for _, l := range pg.Lines {
			tl := TextLine{Text: l.Text, ID: l.ID, Language: l.Language}
			if l.Box != nil {
				box := l.Box.Scale(pg.Width, pg.Height, w, h)
				tl.Box = &box
			}
			for _, p := range l.Polygon {
				tl.Polygon = append(tl.Polygon, Point{p.X * sx, p.Y * sy})
			}
			lines = append(lines, tl)
		}
	}
	return lines
}

// PageClass is a page's class as the classifier gave it.
type PageClass struct {
	Category string
	Score    float64
}

// ReviewFlag says that a person should check a page's classes, and why:
// Reasons are the reasons as the classifier gives them (pageclass's
// REVIEW table: "low_margin", "near_blank", ...).
type ReviewFlag struct {
	Reasons []string
}

type annotationPage struct {
	Context string       `json:"@context"`
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Items   []annotation `json:"items"`
}

type annotation struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	Label      langMap   `json:"label,omitempty"`
	Motivation string    `json:"motivation"`
	Body       body      `json:"body"`
	Target     any       `json:"target"` // a URL or a specificResource
	Generator  generator `json:"generator"`
}

type body struct {
	Type     string   `json:"type"`
	Value    string   `json:"value"`
	Format   string   `json:"format"`
	Language string   `json:"language,omitempty"`
	Purpose  string   `json:"purpose,omitempty"`
	Score    *float64 `json:"score,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
}

// langMap is a IIIF language map (a label's values by language).
type langMap map[string][]string

// specificResource is a W3C Web Annotation Specific Resource: a part of
// source given by selectors, each selecting the same part (a client uses
// the one it can: the box first, for those that cannot draw SVG).
type specificResource struct {
	Type     string     `json:"type"`
	Source   string     `json:"source"`
	Selector []selector `json:"selector"`
}

type selector struct {
	Type       string `json:"type"`
	ConformsTo string `json:"conformsTo,omitempty"`
	Value      string `json:"value"`
}

// mediaFragments is the specification FragmentSelector values conform to.
const mediaFragments = "http://www.w3.org/TR/media-frags/"

// target is an annotation's target on canvas for a line: the canvas at
// the line's box (a Media Fragment), or, when the line has a polygon, a
// SpecificResource of the canvas with two selectors: a FragmentSelector
// of the box and an SvgSelector of the polygon in canvas coordinates.
func target(canvas string, l TextLine) any {
	if l.Box == nil {
		return canvas
	}
	if len(l.Polygon) < 3 {
		return canvas + "#" + l.Box.fragment()
	}
	return specificResource{Type: "SpecificResource", Source: canvas, Selector: []selector{
		{Type: "FragmentSelector", ConformsTo: mediaFragments, Value: l.Box.fragment()},
		{Type: "SvgSelector", Value: svg(l.Polygon)},
	}}
}

type generator struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type"`
	Name     string `json:"name"`
	Homepage string `json:"homepage,omitempty"`
}

func (a Agent) generator() generator {
	return generator{ID: a.Homepage, Type: "Software", Name: a.String(), Homepage: a.Homepage}
}

// noteKind is what an annotation says of its canvas.
type noteKind int

const (
	translated noteKind = iota // a line's translation
	classified                 // a page class and its score
	reviewed                   // a review flag and its reasons
)

// note is one annotation of a canvas as the writers of both Presentation
// versions render it: what it says and where (TranslationPage and
// ClassPage for Presentation 3, TranslationList and ClassList for 2).
type note struct {
	frag     string // the annotation id's fragment ("t1", "c2", "r1")
	kind     noteKind
	label    string // "" for none
	text     string
	language string // "" for none
	score    *float64
	reasons  []string
	line     TextLine // where: the line's box and polygon (no box: the whole canvas)
}

// translationNotes are the notes of translated lines: one a line with
// text, in order, in the line's language, else in language.
func translationNotes(language string, lines []TextLine) []note {
	var notes []note
	for _, l := range lines {
		if l.Text == "" {
			continue
		}
		notes = append(notes, note{frag: fmt.Sprintf("t%d", len(notes)+1), kind: translated, text: l.Text, language: cmp.Or(l.Language, language), line: l})
	}
	return notes
}

// classNotes are the notes of a page's classes (best first, each
// labelled with its rank: "class 2 of 3") and, when flag is not nil, of
// its review flag (labelled "needs review", its text the flag with the
// reasons).
func classNotes(classes []PageClass, flag *ReviewFlag) []note {
	var notes []note
	for i, c := range classes {
		score := c.Score
		notes = append(notes, note{frag: fmt.Sprintf("c%d", i+1), kind: classified,
			label: fmt.Sprintf("class %d of %d", i+1, len(classes)), text: c.Category, score: &score})
	}
	if flag != nil {
		text := "needs review"
		if len(flag.Reasons) > 0 {
			text += ": " + strings.Join(flag.Reasons, ", ")
		}
		notes = append(notes, note{frag: "r1", kind: reviewed, label: "needs review", text: text, language: "en",
			reasons: append([]string{}, flag.Reasons...)})
	}
	return notes
}

// motivations and purposes of the notes' Presentation 3 annotations.
var (
	motivations3 = map[noteKind]string{translated: "supplementing", classified: "classifying", reviewed: "commenting"}
	purposes3    = map[noteKind]string{classified: "classifying", reviewed: "assessing"}
)

// annotationPage3 is the Presentation 3 annotation page id of notes on
// canvas.
func annotationPage3(id, canvas string, notes []note, gen Agent) ([]byte, error) {
	p := annotationPage{Context: presentation3Context, ID: id, Type: "AnnotationPage", Items: []annotation{}}
	for _, n := range notes {
		a := annotation{ID: id + "#" + n.frag, Type: "Annotation", Motivation: motivations3[n.kind],
			Body: body{Type: "TextualBody", Value: n.text, Format: "text/plain", Language: n.language, Purpose: purposes3[n.kind],
				Score: n.score, Reasons: n.reasons},
			Target: target(canvas, n.line), Generator: gen.generator()}
		if n.label != "" {
			a.Label = langMap{"en": {n.label}}
		}
		p.Items = append(p.Items, a)
	}
	return json.MarshalIndent(p, "", "  ")
}

// TranslationPage returns the W3C annotation page id (IIIF Presentation
// 3) of a canvas's translated lines: one supplementing annotation a line
// with a TextualBody in language (the machine-translation tag,
// "en-t-cs-t0-und"), targeting the canvas at the line's box (a polygon
// line: a SpecificResource with the box's FragmentSelector and the
// polygon's SvgSelector), generated by gen. Empty lines are left out.
func TranslationPage(id, canvas, language string, lines []TextLine, gen Agent) ([]byte, error) {
	if id == "" || canvas == "" || language == "" {
		return nil, errors.New("bookout: annotation page needs an id, a canvas and a language")
	}
	return annotationPage3(id, canvas, translationNotes(language, lines), gen)
}

// ClassPage returns the annotation page id of a canvas's page classes:
// one classifying annotation a class, in the order of classes (best
// first: the classifier's top-N), its TextualBody the category (purpose
// classifying) with the score as the extension property "score" (Web
// Annotation has none; IIIF libraries keep the rest) and its label
// saying its rank ("class 2 of 3"). A page flagged for review (flag not
// nil) gets one more annotation, a commenting one (the motivation viewers
// show) labelled "needs review", whose TextualBody (purpose assessing)
// says so with the reasons, also as the extension property "reasons".
func ClassPage(id, canvas string, classes []PageClass, flag *ReviewFlag, gen Agent) ([]byte, error) {
	if id == "" || canvas == "" {
		return nil, errors.New("bookout: annotation page needs an id and a canvas")
	}
	return annotationPage3(id, canvas, classNotes(classes, flag), gen)
}

// CanvasLinks is what the derived manifest adds to one canvas.
type CanvasLinks struct {
	// Canvas is the canvas id.
	Canvas string
	// Annotations are annotation page ids, added to the canvas's
	// annotations.
	Annotations []string
	// ALTO is the translated text file's URL ("" for none), added to
	// seeAlso with format Format and profile ALTOProfile and Label. An
	// ALTO file leaves Format empty (ALTOFormat, and ALTOProfilePrefix
	// when ALTOProfile is empty); a PAGE-XML or hOCR file gives its
	// format (PAGEFormat, HOCRFormat) and profile.
	ALTO, ALTOProfile, Label string
	Format                   string
}

// DerivedManifest returns the IIIF manifest src as a new manifest id
// whose canvases link the annotation pages and translated text files of
// links; everything else is kept (keys in JSON order of Go's encoder). A
// Presentation 3 manifest's canvases (items) get the pages in
// annotations and the files in seeAlso; a Presentation 2 manifest's
// canvases (sequences' canvases) get them as annotation lists in
// otherContent and in seeAlso (see ManifestVersion).
// CanvasNumbers numbers the canvases of the manifest src from 1 in their
// order (the first sequence's of Presentation 2, the items of 3), by id:
// both tools name a canvas's annotation page after its number
// (<stem>/<n>.json), so that the pages of one canvas written by pageclass
// and translate carry one number (translate numbered its files in the
// order done, and a page without a text file shifted every number after
// it). A manifest that cannot be read numbers nothing.
func CanvasNumbers(src []byte) map[string]int {
	var m map[string]any
	if json.Unmarshal(src, &m) != nil {
		return nil
	}
	v, err := manifestVersion(m)
	if err != nil {
		return nil
	}
	nums := map[string]int{}
	number := func(canvases []any, idKey string) {
		for _, it := range canvases {
			if c, ok := it.(map[string]any); ok {
				if cid, _ := c[idKey].(string); cid != "" && nums[cid] == 0 {
					nums[cid] = len(nums) + 1
				}
			}
		}
	}
	if v == Presentation2 {
		if seqs, _ := m["sequences"].([]any); len(seqs) > 0 {
			if seq, ok := seqs[0].(map[string]any); ok {
				canvases, _ := seq["canvases"].([]any)
				number(canvases, "@id")
			}
		}
	} else {
		items, _ := m["items"].([]any)
		number(items, "id")
	}
	return nums
}

// PageName is the file name of the annotation page of canvas (CanvasNumbers
// nums) in a book's annotation folder: "<n>.json", "<n>-<k>.json" for the
// k-th of one canvas (a canvas with two text files), or, for a canvas the
// manifest does not number, "x<seq>.json" after the order written (seq).
func PageName(nums map[string]int, canvas string, k, seq int) string {
	n, ok := nums[canvas]
	switch {
	case !ok:
		return "x" + strconv.Itoa(seq) + ".json"
	case k > 1:
		return strconv.Itoa(n) + "-" + strconv.Itoa(k) + ".json"
	}
	return strconv.Itoa(n) + ".json"
}

func DerivedManifest(src []byte, id string, links []CanvasLinks) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(src, &m); err != nil {
		return nil, fmt.Errorf("bookout: manifest: %w", err)
	}
	v, err := manifestVersion(m)
	if err != nil {
		return nil, err
	}
	byCanvas := map[string]CanvasLinks{}
	for _, l := range links {
		byCanvas[l.Canvas] = l
	}
	found := map[string]bool{}
	visit := func(canvases []any, idKey string, link func(map[string]any, CanvasLinks)) {
		for _, it := range canvases {
			c, ok := it.(map[string]any)
			if !ok {
				continue
			}
			cid, _ := c[idKey].(string)
			if l, ok := byCanvas[cid]; ok && !found[cid] {
				found[cid] = true
				link(c, l)
			}
		}
	}
	if v == Presentation2 {
		m["@id"] = id
		seqs, _ := m["sequences"].([]any)
		for _, s := range seqs {
			if seq, ok := s.(map[string]any); ok {
				canvases, _ := seq["canvases"].([]any)
				visit(canvases, "@id", link2.link)
			}
		}
	} else {
		m["id"] = id
		items, _ := m["items"].([]any)
		visit(items, "id", link3.link)
	}
	if len(found) != len(byCanvas) {
		return nil, fmt.Errorf("bookout: %d of the %d canvases linked are not in the manifest", len(byCanvas)-len(found), len(byCanvas))
	}
	return json.MarshalIndent(m, "", "  ")
}

// canvasLinker adds a CanvasLinks to a canvas in the terms of a
// Presentation version: the list of annotation pages (3: annotations of
// AnnotationPage; 2: otherContent of sc:AnnotationList) and the text file
// in seeAlso (3: a Dataset with a language-map label; 2: a string label;
// a single link already there is made a list).
type canvasLinker struct {
	annotations, id, typ, pageType string
	v2                             bool
}

var (
	link3 = canvasLinker{annotations: "annotations", id: "id", typ: "type", pageType: "AnnotationPage"}
	link2 = canvasLinker{annotations: "otherContent", id: "@id", typ: "@type", pageType: "sc:AnnotationList", v2: true}
)

// link adds l to canvas c.
func (k canvasLinker) link(c map[string]any, l CanvasLinks) {
	anns, _ := c[k.annotations].([]any)
	for _, a := range l.Annotations {
		anns = append(anns, map[string]any{k.id: a, k.typ: k.pageType})
	}
	if len(anns) > 0 {
		c[k.annotations] = anns
	}
	if l.ALTO == "" {
		return
	}
	format, profile := l.seeAlso()
	entry := map[string]any{k.id: l.ALTO, "format": format}
	if !k.v2 {
		entry["type"] = "Dataset"
	}
	if profile != "" {
		entry["profile"] = profile
	}
	switch {
	case l.Label == "":
	case k.v2:
		entry["label"] = l.Label
	default:
		entry["label"] = map[string]any{"none": []any{l.Label}}
	}
	var see []any
	switch s := c["seeAlso"].(type) {
	case nil:
	case []any:
		see = s
	default:
		see = []any{s}
	}
	c["seeAlso"] = append(see, entry)
}

// seeAlso is the format and profile of l's text file link.
func (l CanvasLinks) seeAlso() (format, profile string) {
	format, profile = l.Format, l.ALTOProfile
	if format == "" {
		format = ALTOFormat
		if profile == "" {
			profile = ALTOProfilePrefix
		}
	}
	return format, profile
}

// BaseURL is the base of the ids of IIIF outputs written into dir (an
// absolute folder), ending in "/": given (the URL dir will be published
// at; http, https or file) or, when empty, dir's file:// URL.
func BaseURL(given, dir string) (string, error) {
	if given == "" {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir) + "/"}).String(), nil
	}
	u, err := url.Parse(given)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") {
		return "", fmt.Errorf("bookout: base URL %q: not an http(s) or file URL", given)
	}
	return strings.TrimRight(given, "/") + "/", nil
}

// LocalIDs is the warning a command gives when the ids of its IIIF
// outputs are the output folder's file:// URLs (no base URL given): a
// viewer loads a manifest's annotations only from http(s) addresses, so
// outputs meant to be published need the address they will have. "" when
// a base was given.
func LocalIDs(given, dir string) string {
	if given != "" {
		return ""
	}
	return "--book-out: the IIIF ids are file:// URLs of " + dir + ": viewers (Mirador) and IIIF readers load annotations from http(s) only; to publish the folder, give --book-base-url with the address it will have"
}

// WriteFiles writes files (slash-separated paths relative to dir) under
// dir, each atomically, making the folders they need, and returns the
// paths written in name order.
func WriteFiles(dir string, files map[string][]byte) ([]string, error) {
	names := make([]string, 0, len(files))
	for rel := range files {
		names = append(names, rel)
	}
	sort.Strings(names)
	var written []string
	for _, rel := range names {
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o777); err != nil {
			return written, err
		}
		if err := atomicfile.WriteFile(dst, files[rel], 0o666); err != nil {
			return written, err
		}
		written = append(written, dst)
	}
	return written, nil
}
