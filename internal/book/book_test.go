package book

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"archivekit/internal/fetch"
)

// files is a transport that serves URLs under a prefix from a folder of
// testdata, and 404 for everything else, so that tests reach no network.
type files map[string]string

func (f files) RoundTrip(r *http.Request) (*http.Response, error) {
	u := r.URL.String()
	for prefix, dir := range f {
		if strings.HasPrefix(u, prefix) {
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + strings.TrimPrefix(u, prefix)
			r2.URL.RawPath = ""
			if filepath.Ext(dir) == ".xml" { // one file
				r2.URL.Path, dir = "/"+filepath.Base(dir), filepath.Dir(dir)
			}
			return http.NewFileTransport(http.Dir(dir)).RoundTrip(r2)
		}
	}
	return http.NewFileTransport(http.Dir(os.DevNull + ".none")).RoundTrip(r)
}

// offline is a Fetcher for tests: the cookbook's URLs from testdata, and
// the Kitodo fixture's first fulltext file, nothing else.
func offline() *fetch.Fetcher {
	return fetch.New(fetch.Policy{Retries: -1}, files{
		"https://iiif.io/api/cookbook/recipe/": "testdata/iiif/cookbook",
		"https://example.com/fulltext_0001":    "testdata/mets/ocrd-kant/OCR-D-GT-ALTO/PAGE_0017_ALTO.xml",
	})
}

type want struct {
	kind                  Kind
	version               string
	pages                 int
	imageGroup            string
	firstID, lastID       string
	firstOrder, lastOrder string
	firstLabel            string
	firstImage            string // the first page's image location (suffix)
	level                 int    // the first image's service level; -2: no service
	firstTexts            []Format
	textSuffix            string // the first page's first text file location (suffix)
	problems              []string
}

func TestReadRealBooks(t *testing.T) {
	for _, c := range []struct {
		file string
		opts Options
		want want
	}{
		{"mets/ocrd-kant/mets.xml", Options{}, want{ // OCR-D: OCR-D-IMG, PAGE and ALTO ground truth, relative hrefs
			kind: METS, pages: 2, imageGroup: "OCR-D-IMG", firstID: "PHYS_0017", lastID: "PHYS_0020",
			firstImage: "ocrd-kant/OCR-D-IMG/INPUT_0017.tif", level: -2,
			firstTexts: []Format{PAGE, ALTO}, textSuffix: "ocrd-kant/OCR-D-GT-PAGE/PAGE_0017_PAGE.xml"}},
		{"mets/ocrd-kant/mets.xml", Options{TextGroups: []string{"OCR-D-GT-ALTO"}, Pages: "PHYS_0020"}, want{
			kind: METS, pages: 1, imageGroup: "OCR-D-IMG", firstID: "PHYS_0020", lastID: "PHYS_0020",
			firstImage: "OCR-D-IMG/INPUT_0020.tif", level: -2, firstTexts: []Format{ALTO}, textSuffix: "PAGE_0020_ALTO.xml"}},
		{"mets/kitodo-mets_with_pages.xml", Options{}, want{ // Kitodo: DEFAULT and FULLTEXT typed application/pdf
			kind: METS, pages: 4, imageGroup: "DEFAULT", firstID: "PHYS_0001", lastID: "PHYS_0004", firstOrder: "1", lastOrder: "4",
			firstImage: "https://example.com/image/0001.png", level: -2,
			firstTexts: []Format{ALTO}, textSuffix: "https://example.com/fulltext_0001.xml",
			problems: []string{
				"PHYS_0001: FULLTEXT_0001: declared application/pdf, is ALTO",
				"PHYS_0002: FULLTEXT_0002: cannot read: GET https://example.com/fulltext_002.xml: 404 Not Found",
				"PHYS_0003: FULLTEXT_0003: cannot read: GET http://web:8001/Tests/Fixtures/MetsDocument/fulltext_0003.xml: 404 Not Found",
				"PHYS_0004: FULLTEXT_0004: cannot read: GET https://example.com/fulltext_0003.xml: 404 Not Found",
			}}},
		{"mets/kitodo-mets_with_pages.xml", Options{Text: TextDeclared}, want{ // nothing fetched: FULLTEXT taken as ALTO
			kind: METS, pages: 4, imageGroup: "DEFAULT", firstID: "PHYS_0001", lastID: "PHYS_0004", firstOrder: "1", lastOrder: "4",
			firstImage: "https://example.com/image/0001.png", level: -2,
			firstTexts: []Format{ALTO}, textSuffix: "https://example.com/fulltext_0001.xml"}},
		{"mets/kitodo-mets_newspaper.xml", Options{}, want{ // MAX, THUMBS, DOWNLOAD (PDF), FULLTEXT as text/plain; a root fptr
			kind: METS, pages: 2, imageGroup: "MAX", firstID: "PHYS_0001", lastID: "PHYS_0002", firstOrder: "1", lastOrder: "2",
			firstLabel: " - ", firstImage: "00000001.tif.large.jpg", level: -2,
			// named: each page is then left without text
			problems: []string{"PHYS_0001: FILE_0001_FULLTEXT: fileGrp FULLTEXT: text/plain, not ALTO, PAGE-XML or hOCR: not read",
				"PHYS_0002: FILE_0002_FULLTEXT: fileGrp FULLTEXT: text/plain, not ALTO, PAGE-XML or hOCR: not read"}}},
		{"mets/dfgviewer-minimal_mets_iipimage.xml", Options{}, want{ // DFG-Viewer documentation: an IIPImage (FlashPix) URL
			kind: METS, pages: 2, imageGroup: "DEFAULT", firstID: "PHYS_0001", lastID: "PHYS_0002", firstOrder: "1", lastOrder: "2",
			firstImage: "iipsrv.fcgi?FIF=heic0601a.tif", level: -2}},
		{"mets/goobi-hu-BV048249088.xml", Options{}, want{ // Goobi (HU Berlin): DEFAULT, MAX, MIN, PRESENTATION, THUMBS
			kind: METS, pages: 2, imageGroup: "DEFAULT", firstID: "PHYS_0001", lastID: "PHYS_0002", firstOrder: "1", lastOrder: "2",
			firstLabel: " - ", firstImage: "https://sammlungen-digital.hu-berlin.de/viewer/content/BV048249088/800/0/00000001.jpg", level: -2}},
		{"mets/goobi-ulb-74241.xml", Options{}, want{ // Goobi: PRESENTATION only, file:/// hrefs, ORDER not the ID's number
			kind: METS, pages: 52, imageGroup: "PRESENTATION", firstID: "PHYS_0001", lastID: "PHYS_0060", firstOrder: "1", lastOrder: "52",
			firstLabel: " - ", firstImage: "/opt/digiverso/viewer/media/74241/flb000645_0001.jpg", level: -2}},
		{"mets/goobi-ulb-74241.xml", Options{SkipTypes: []string{"Cover"}}, want{ // logical TYPE cover left out
			kind: METS, pages: 49, imageGroup: "PRESENTATION", firstID: "PHYS_0002", lastID: "PHYS_0058", firstOrder: "2", lastOrder: "50",
			firstLabel: " - ", firstImage: "flb000645_0002.jpg", level: -2,
			problems: []string{
				"PHYS_0001: skipped: logical div LOG_0001 of TYPE cover",
				"PHYS_0059: skipped: logical div LOG_0013 of TYPE cover",
				"PHYS_0060: skipped: logical div LOG_0013 of TYPE cover",
			}}},
		{"mets/goobi-ulb-74241.xml", Options{Pages: "PHYS_0003..PHYS_0010,~PHYS_0004"}, want{ // OCR-D page selection: a range in physical order (PHYS_0006-0009 do not exist)
			kind: METS, pages: 3, imageGroup: "PRESENTATION", firstID: "PHYS_0003", lastID: "PHYS_0010", firstOrder: "3", lastOrder: "6",
			firstLabel: " - ", firstImage: "flb000645_0003.jpg", level: -2}},
		{"mets/alma-kuleuven-9940609919905131.xml", Options{}, want{ // Alma: BOOKVIEWER, VIEWER, DEFAULT; file://relative hrefs
			kind: METS, pages: 70, imageGroup: "DEFAULT", firstID: "PHYS_0001", lastID: "PHYS_0070", firstOrder: "1", lastOrder: "70",
			firstLabel: "Voorplat", firstImage: filepath.Join("testdata", "mets", "ph418_b__bph_ok_962_(2)_001.tif"), level: -2}},
		{"mets/alma-kuleuven-9940609919905131.xml", Options{ImageGroup: "VIEWER"}, want{ // a group chosen explicitly
			kind: METS, pages: 70, imageGroup: "VIEWER", firstID: "PHYS_0001", lastID: "PHYS_0070", firstOrder: "1", lastOrder: "70",
			firstLabel: "Voorplat", firstImage: ".jpg", level: -2}},
		{"mets/europeana-18140402_1/18140402_1-METS.xml", Options{}, want{ // Europeana Newspapers (CCS, BnF): nested groups, USE content, file://./ hrefs, ALTO without namespace
			kind: METS, pages: 4, imageGroup: "Preservation", firstID: "DIVP2", lastID: "DIVP5", firstOrder: "1", lastOrder: "4",
			firstLabel: "1", firstImage: filepath.Join("europeana-18140402_1", "OCRmaster", "18140402_1-0001.jp2"), level: -2,
			firstTexts: []Format{ALTO}, textSuffix: filepath.Join("europeana-18140402_1", "ALTO", "18140402_1-0001.xml")}},
		{"mets/gdz-kleiuniv_PPN517154005.xml", Options{}, want{ // GDZ Göttingen: DEFAULT over LOCAL file:/// TIFFs
			kind: METS, pages: 16, imageGroup: "DEFAULT", firstID: "PHYS_0001", lastID: "PHYS_0016", firstOrder: "1", lastOrder: "16",
			firstLabel: " - ", firstImage: "http://gdz-srv1.sub.uni-goettingen.de/content/PPN517154005/800/0/00000001.jpg", level: -2}},

		{"iiif/cookbook/0009-book-1/manifest.json", Options{}, want{ // IIIF 3, a book of 5 canvases, level 1 services
			kind: Manifest, version: "3", pages: 5, firstID: "https://iiif.io/api/cookbook/recipe/0009-book-1/canvas/p1",
			lastID: "https://iiif.io/api/cookbook/recipe/0009-book-1/canvas/p5", firstLabel: "Blank page",
			firstImage: "bpt6k1526005v_f18/full/max/0/default.jpg", level: 1}},
		{"iiif/cookbook/0032-collection/collection.json", Options{}, want{ // IIIF 3 collection of two manifests (fetched)
			kind: Collection, version: "3", pages: 2, firstID: "https://iiif.io/api/cookbook/recipe/0032-collection/manifest/1/canvas/p1",
			lastID:     "https://iiif.io/api/cookbook/recipe/0032-collection/manifest/2/canvas/p1",
			firstImage: "The_Gulf_Stream_-_Metropolitan_Museum_of_Art/full/max/0/default.jpg", level: 1}},
		{"iiif/cookbook/0068-newspaper/newspaper_title-collection.json", Options{}, want{ // collection of issues, ALTO in rendering
			kind: Collection, version: "3", pages: 4, firstID: "https://iiif.io/api/cookbook/recipe/0068-newspaper/canvas/p1",
			lastID: "https://iiif.io/api/cookbook/recipe/0068-newspaper/canvas/p2", firstLabel: "p. 1",
			firstImage: "newspaper-p1/full/max/0/default.jpg", level: 1,
			firstTexts: []Format{ALTO}, textSuffix: "newspaper_issue_1-alto_p1.xml"}},
		{"iiif/textoverlay-EAP119-1-8-1_issue1.json", Options{}, want{ // IIIF 2.1, ALTO in seeAlso (profile ns-v2#)
			kind: Manifest, version: "2", pages: 33, firstID: "https://eap.bl.uk/archive-file/EAP119-1-8-1/canvas/6",
			lastID: "https://eap.bl.uk/archive-file/EAP119-1-8-1/canvas/38", firstLabel: "6",
			firstImage: "EAP119_1_8_1/6.jp2/full/full/0/default.jpg", level: 2,
			firstTexts: []Format{ALTO}, textSuffix: "alto/EAP119-1-8-1/0006_190906_006_L.xml"}},
		{"iiif/albany-bad4b7c7.json", Options{}, want{ // IIIF 3, hOCR in rendering, profile "level1"
			kind: Manifest, version: "3", pages: 1, firstID: "https://media.archives.albany.edu/ua950.008/bad4b7c7a5a763fe46994f1825213ea0/canvas/p1",
			lastID:     "https://media.archives.albany.edu/ua950.008/bad4b7c7a5a763fe46994f1825213ea0/canvas/p1",
			firstLabel: "bad4b7c7a5a763fe46994f1825213ea0.ptif", firstImage: "/full/max/0/default.jpg", level: 1,
			firstTexts: []Format{HOCR}, textSuffix: "hocr/bad4b7c7a5a763fe46994f1825213ea0.hocr"}},
		{"iiif/mirador-gau.json", Options{}, want{ // IIIF 2.1 (e-codices), two sequences
			kind: Manifest, version: "2", pages: 13, firstID: "https://www.e-codices.unifr.ch/metadata/iiif/gau-Fragment/canvas/gau-Fragment_frag001a.json",
			lastID: "https://www.e-codices.unifr.ch/metadata/iiif/gau-Fragment/canvas/gau-Fragment_ProfilSG.json", firstLabel: "fragm1a",
			firstImage: "gau-Fragment_frag001a.jp2/full/full/0/default/jpg", level: 2,
			problems: []string{"https://www.e-codices.unifr.ch/metadata/iiif/gau-Fragment/manifest.json: 2 sequences: only the first is read"}}},
		{"iiif/mirador-001.json", Options{}, want{ // IIIF 2.1 (Bodleian), level 1
			kind: Manifest, version: "2", pages: 1, firstID: "https://iiif.bodleian.ox.ac.uk/iiif/canvas/9cca8fdd-4a61-4429-8ac1-f648764b4d6d.json",
			lastID: "https://iiif.bodleian.ox.ac.uk/iiif/canvas/9cca8fdd-4a61-4429-8ac1-f648764b4d6d.json", firstLabel: "Whole Page",
			firstImage: "iiif/image/9cca8fdd-4a61-4429-8ac1-f648764b4d6d", level: 1}},
	} {
		name := c.file + " " + c.opts.Pages + strings.Join(c.opts.SkipTypes, ",") + c.opts.ImageGroup + strings.Join(c.opts.TextGroups, ",")
		t.Run(name, func(t *testing.T) {
			c.opts.Fetcher = offline()
			b, err := Read(context.Background(), filepath.Join("testdata", c.file), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			w := c.want
			if b.Kind != w.kind || b.Version != w.version || len(b.Pages) != w.pages || b.ImageGroup != w.imageGroup {
				t.Fatalf("kind %q version %q, %d pages, image group %q; want %q %q, %d, %q", b.Kind, b.Version, len(b.Pages), b.ImageGroup, w.kind, w.version, w.pages, w.imageGroup)
			}
			first, last := b.Pages[0], b.Pages[len(b.Pages)-1]
			if first.ID != w.firstID || last.ID != w.lastID || first.Order != w.firstOrder || last.Order != w.lastOrder || first.Label != w.firstLabel {
				t.Errorf("first %q order %q label %q, last %q order %q; want %q %q %q, %q %q",
					first.ID, first.Order, first.Label, last.ID, last.Order, w.firstID, w.firstOrder, w.firstLabel, w.lastID, w.lastOrder)
			}
			if first.Image == nil || !strings.HasSuffix(first.Image.Location, w.firstImage) {
				t.Errorf("first image %+v, want one ending %q", first.Image, w.firstImage)
			} else if level := imageLevel(first.Image); level != w.level {
				t.Errorf("image service level %d, want %d", level, w.level)
			}
			var formats []Format
			for _, tx := range first.Texts {
				formats = append(formats, tx.Format)
			}
			if strings.Join(fmts(formats), ",") != strings.Join(fmts(w.firstTexts), ",") {
				t.Errorf("first page's texts %v, want %v", formats, w.firstTexts)
			}
			if len(first.Texts) > 0 && !strings.HasSuffix(first.Texts[0].Location, w.textSuffix) {
				t.Errorf("first text %q, want one ending %q", first.Texts[0].Location, w.textSuffix)
			}
			var problems []string
			for _, p := range b.Problems {
				problems = append(problems, p.String())
			}
			if strings.Join(problems, "\n") != strings.Join(w.problems, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(w.problems, "\n"))
			}
			for _, p := range b.Pages {
				if p.Image == nil {
					t.Errorf("%s: no image", p.ID)
				}
			}
		})
	}
}

func imageLevel(img *Image) int {
	if img.Service == nil {
		return -2
	}
	return img.Service.Level
}

func fmts(fs []Format) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f))
	}
	return out
}

func TestReadSniffsEveryText(t *testing.T) {
	b, err := Read(context.Background(), "testdata/mets/ocrd-kant/mets.xml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range b.Pages {
		for _, tx := range p.Texts {
			if !tx.Sniffed {
				t.Errorf("%s: %s not sniffed", p.ID, tx.Location)
			}
		}
	}
}

// TestReadErrors: what is not a book, or breaks a bound, is an error that
// names the file and what was wrong.
func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deep := strings.Repeat("<a>", 300) + strings.Repeat("</a>", 300)
	for _, c := range []struct {
		path string
		opts Options
		is   error
		msg  string
	}{
		{write("empty.xml", ""), Options{}, ErrNotABook, "the file is empty"},
		{write("page.xml", `<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"/>`), Options{}, ErrNotABook,
			"its XML root element is {http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15}PcGts, and it holds no METS element"},
		{write("pdf", "%PDF-1.4"), Options{}, ErrPageFile, `it is a page image or a PDF (application/pdf)`},
		{write("png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), Options{}, ErrPageFile, `it is a page image or a PDF (image/png)`},
		{write("text", "minutes"), Options{}, ErrNotABook, `it is neither XML nor JSON (it starts with "minutes")`},
		{write("other.json", `{"@context": "https://schema.org", "type": "Book"}`), Options{}, ErrNotABook, `JSON without a IIIF Presentation type (type "Book"`},
		{write("broken.json", `{"type": "Manifest",`), Options{}, ErrNotABook, "not well-formed JSON"},
		{write("broken.xml", `<mets:mets xmlns:mets="http://www.loc.gov/METS/"><mets:fileSec>`), Options{}, ErrNotABook, "not well-formed XML"},
		{write("deep.xml", deep), Options{}, ErrLimit, "XML nested deeper than 200"},
		{write("deep.json", `{"type":"Manifest","x":`+strings.Repeat("[", 300)+strings.Repeat("]", 300)+`}`), Options{}, ErrLimit, "JSON nested deeper than 200"},
		{"testdata/mets/goobi-ulb-74241.xml", Options{MaxBytes: 1000}, ErrLimit, "the limit is 1000"},
		{"testdata/mets/goobi-ulb-74241.xml", Options{MaxPages: 10}, ErrLimit, "52 pages, the limit is 10"},
		{"testdata/mets/goobi-ulb-74241.xml", Options{Pages: "PHYS_0001..PHYS_9999"}, nil, "page range PHYS_0001..PHYS_9999: no page PHYS_9999"},
		{"testdata/mets/goobi-ulb-74241.xml", Options{Pages: "~PHYS_00*"}, ErrNoPages, "no pages"},
		{"testdata/mets/ocrd-kant/mets.xml", Options{ImageGroup: "MAX"}, nil, "no fileGrp MAX (it has OCR-D-IMG, OCR-D-GT-PAGE, OCR-D-GT-ALTO)"},
		{"testdata/mets/ocrd-kant/mets.xml", Options{TextGroups: []string{"FULLTEXT"}}, nil, "no fileGrp FULLTEXT"},
		{write("nophys.xml", `<mets xmlns="http://www.loc.gov/METS/"><structMap TYPE="LOGICAL"/></mets>`), Options{}, nil, "METS without a PHYSICAL structMap"},
		// The anchor file of a multi-volume work (Kitodo, the DFG-Viewer
		// profile): its volumes are named (it said only "without a
		// PHYSICAL structMap").
		{write("anchor.xml", `<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink"><mets:structMap TYPE="LOGICAL">
		  <mets:div TYPE="periodical"><mets:div TYPE="volume"><mets:mptr LOCTYPE="URL" xlink:href="https://example.org/v1/mets.xml"/></mets:div>
		  <mets:div TYPE="volume"><mets:mptr LOCTYPE="URL" xlink:href="https://example.org/v2/mets.xml"/></mets:div></mets:div></mets:structMap></mets:mets>`),
			Options{}, ErrNoPages, "pointing to 2 volume METS files (mets:mptr: https://example.org/v1/mets.xml, https://example.org/v2/mets.xml)"},
	} {
		t.Run(filepath.Base(c.path)+c.msg, func(t *testing.T) {
			_, err := Read(context.Background(), c.path, c.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v: not %v", err, c.is)
			}
			if !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), c.path) && !strings.Contains(err.Error(), "page") {
				t.Errorf("error %q: want the file and %q", err, c.msg)
			}
		})
	}
}

// TestCollectionCycle: a collection that lists itself (and a collection
// nested deeper than the limit) ends, with the cycle recorded.
func TestCollectionCycle(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "c.json")
	body := `{"@context":"http://iiif.io/api/presentation/3/context.json","id":"https://example.org/c","type":"Collection","items":[
	  {"id":"https://example.org/c","type":"Collection"},
	  {"id":"m.json","type":"Manifest"}]}`
	manifest := `{"@context":"http://iiif.io/api/presentation/3/context.json","id":"https://example.org/m","type":"Manifest","items":[
	  {"id":"https://example.org/m/p1","type":"Canvas","items":[{"type":"AnnotationPage","items":[{"type":"Annotation","motivation":"painting",
	  "body":{"id":"https://example.org/i/full/max/0/default.jpg","type":"Image","service":[{"id":"https://example.org/i","type":"ImageService3","profile":"level0",
	  "sizes":[{"width":150,"height":200},{"width":600,"height":800}]}]}}]}]}]}`
	if err := os.WriteFile(self, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Read(context.Background(), self, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Pages) != 1 || len(b.Problems) != 1 || !strings.Contains(b.Problems[0].Reason, "collection cycle") {
		t.Fatalf("pages %d, problems %v", len(b.Pages), b.Problems)
	}
	if got := b.Pages[0].Image.Service.Derivative(384); got != "https://example.org/i/full/600,800/0/default.jpg" {
		t.Errorf("level 0 derivative %s", got)
	}

	// a v2 collection listing manifests by bare URI
	v2 := filepath.Join(dir, "v2.json")
	if err := os.WriteFile(v2, []byte(`{"@context":"http://iiif.io/api/presentation/2/context.json","@id":"https://example.org/v2","@type":"sc:Collection","manifests":["m.json"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(context.Background(), v2, Options{}); err != nil || len(b.Pages) != 1 || b.Pages[0].Manifest != "https://example.org/m" {
		t.Errorf("v2 collection of bare URIs: %v %v", b, err)
	}

	// nested collections: c0 -> c1 -> ... beyond MaxCollections
	for i := 0; i < 4; i++ {
		next := `{"id":"n` + string(rune('0'+i+1)) + `.json","type":"Collection"}`
		doc := `{"@context":"http://iiif.io/api/presentation/3/context.json","id":"https://example.org/n` + string(rune('0'+i)) + `","type":"Collection","items":[` + next + `]}`
		if err := os.WriteFile(filepath.Join(dir, "n"+string(rune('0'+i))+".json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Read(context.Background(), filepath.Join(dir, "n0.json"), Options{MaxCollections: 2})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "collections nested deeper than 2") {
		t.Errorf("deep collections: %v", err)
	}
}

func TestLocate(t *testing.T) {
	r := &reader{}
	local := loc{path: "/data/book/mets.xml"}
	remote, _ := r.locate("https://example.org/b/mets.xml", nil)
	for _, c := range []struct {
		ref  string
		base loc
		want string
		err  string
	}{
		{"img/1.jpg", local, "/data/book/img/1.jpg", ""},
		{"./img/1.jpg", local, "/data/book/img/1.jpg", ""},
		{"../other/1.jpg", local, "/data/other/1.jpg", ""},
		{"file:///abs/1.tif", local, "/abs/1.tif", ""},
		{"file://rel_1.tif", local, "/data/book/rel_1.tif", ""},
		{"https://x.org/1.jpg", local, "https://x.org/1.jpg", ""},
		{"img/1.jpg", remote, "https://example.org/b/img/1.jpg", ""},
		{"../1.jpg", remote, "https://example.org/1.jpg", ""},
		{"file:///etc/passwd", remote, "", "a file:// location in a remote document"},
		{"file://localhost/etc/passwd", remote, "", "a file:// location in a remote document"},
		// file://name/rest is read as a path relative to the METS file
		// (Europeana Newspapers, KU Leuven's Alma): under a URL, relative
		// to the URL, as for a local METS file (before: refused, so a
		// Europeana METS served over HTTP had no page with an image or text)
		{"file://./ALTO/1.xml", remote, "https://example.org/b/ALTO/1.xml", ""},
		{"file://rel_1.tif", remote, "https://example.org/b/rel_1.tif", ""},
		{"ftp://x.org/1.jpg", local, "", `scheme "ftp" is not supported`},
	} {
		got, err := r.locate(c.ref, &c.base)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.ref, err, c.err)
			}
			continue
		}
		if err != nil || got.String() != filepath.FromSlash(c.want) {
			t.Errorf("%s against %s: %s %v, want %s", c.ref, c.base, got, err, c.want)
		}
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		data string
		want Format
		err  string
	}{
		{`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"/>`, ALTO, ""},
		{`<pc:PcGts xmlns:pc="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"/>`, PAGE, ""},
		{`<!DOCTYPE html><html><head><meta name="ocr-system" content="tesseract"></head><body><div class="ocr_page"></div></body></html>`, HOCR, ""},
		{`<html><body><p>hello</p></body></html>`, "", "HTML document without hOCR"},
		{`<TEI xmlns="http://www.tei-c.org/ns/1.0"/>`, "", "root element TEI in namespace http://www.tei-c.org/ns/1.0"},
		{`plain text`, "", "no XML element"},
		// Encodings other than UTF-8 (a folder run left such files out as
		// "not XML").
		{"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><!-- Stra\xdfe --><alto xmlns=\"http://www.loc.gov/standards/alto/ns-v2#\"><String CONTENT=\"Stra\xdfe\"/></alto>", ALTO, ""},
		{"<?xml version=\"1.0\" encoding=\"windows-1250\"?><PcGts xmlns=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15\"><!-- P\xf8\xedbram --></PcGts>", PAGE, ""},
		{utf16le("\ufeff<?xml version=\"1.0\" encoding=\"UTF-16\"?><PcGts xmlns=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15\"><Unicode>Straße</Unicode></PcGts>"), PAGE, ""},
		{utf16be("\ufeff<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\"/>"), ALTO, ""},
		{utf16le("<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\"/>"), ALTO, ""},
		{utf16le("\ufeff<html><head><meta name='ocr-system' content='tesseract'/></head><body><div class='ocr_page'/></body></html>"), HOCR, ""},
		// A comment longer than 64 KiB before the root: given the whole
		// file, the root is found (a folder run left such a file out).
		{longPrologue(70 << 10), PAGE, ""},
		// Given a head of 64 KiB without the root, the error says where it
		// looked (it said "not XML: unexpected EOF"), for SniffHead to read on.
		{longPrologue(70 << 10)[:64<<10], "", "no root element in its first 64 KiB (a comment or declaration longer than that before it?)"},
		{longPrologue(5 << 20), "", "no root element in its first 4 MiB"},
	} {
		got, err := Sniff([]byte(c.data))
		if got != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("Sniff(%.30q) = %q, %v; want %q, %q", c.data, got, err, c.want, c.err)
		}
	}
}

// longPrologue is a PAGE document with a comment of n bytes before its root.
func longPrologue(n int) string {
	return `<?xml version="1.0"?><!--` + strings.Repeat("x", n) + `--><PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"/>`
}

// TestSniffHead: the start of a file read to tell its format is its first
// 64 KiB, or up to SniffMax bytes when the root element lies beyond them.
func TestSniffHead(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		data string
		n    int
		want Format
	}{
		{longPrologue(10), len(longPrologue(10)), PAGE},
		{longPrologue(70 << 10), len(longPrologue(70 << 10)), PAGE},
		{longPrologue(5 << 20), SniffMax, ""},
	} {
		p := filepath.Join(dir, "f.xml")
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		head, err := SniffHead(p, nil)
		if err != nil || len(head) != c.n {
			t.Errorf("%d bytes: SniffHead read %d, %v; want %d", len(c.data), len(head), err, c.n)
			continue
		}
		if got, _ := Sniff(head); got != c.want {
			t.Errorf("%d bytes: Sniff of the head %q, want %q", len(c.data), got, c.want)
		}
	}
	if _, err := SniffHead(dir, nil); err == nil {
		t.Error("SniffHead of a folder: no error")
	}
}

// TestIdentify: a text file listed with the format its METS declares is
// told by its content once fetched: the format its content has, kept; one
// that is another format than declared is kept with that format and the
// mismatch said; one that is none of the three is left out, saying so.
func TestIdentify(t *testing.T) {
	for _, c := range []struct {
		declared Format
		data     string
		want     Format
		keep     bool
		reason   string
	}{
		{ALTO, `<alto xmlns="http://www.loc.gov/standards/alto/ns-v2#"/>`, ALTO, true, ""},
		{ALTO, `<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2013-07-15"/>`, PAGE, true, "declared ALTO, is PAGE"},
		{HOCR, `<html><body><div class='ocr_page'/></body></html>`, HOCR, true, ""},
		{HOCR, `{"not": "html"}`, "", false, "declared hOCR, is not ALTO, PAGE or hOCR (no XML element)"},
	} {
		got, reason, keep := Text{Location: "x.xml", Format: c.declared, declared: c.declared}.Identify([]byte(c.data))
		if keep != c.keep || reason != c.reason || keep && (got.Format != c.want || !got.Sniffed) {
			t.Errorf("%s %.20q: %q (sniffed %v), %q, kept %v; want %q, %q, kept %v", c.declared, c.data, got.Format, got.Sniffed, reason, keep, c.want, c.reason, c.keep)
		}
	}
}

func TestParsePages(t *testing.T) {
	ids := []string{"PHYS_0001", "PHYS_0002", "PHYS_0003", "PHYS_0004", "PHYS_0005", "PHYS_0010"}
	for _, c := range []struct {
		sel  string
		want string
		err  string
	}{
		{"", "PHYS_0001 PHYS_0002 PHYS_0003 PHYS_0004 PHYS_0005 PHYS_0010", ""},
		{"PHYS_0002", "PHYS_0002", ""},
		{"PHYS_0001..PHYS_0003", "PHYS_0001 PHYS_0002 PHYS_0003", ""},
		{"PHYS_0003..PHYS_0001", "PHYS_0001 PHYS_0002 PHYS_0003", ""},
		{"PHYS_0001..PHYS_0005,~PHYS_0003", "PHYS_0001 PHYS_0002 PHYS_0004 PHYS_0005", ""},
		{"~PHYS_0001", "PHYS_0002 PHYS_0003 PHYS_0004 PHYS_0005 PHYS_0010", ""},
		{"~PHYS_000*", "PHYS_0010", ""},
		{"PHYS_0010, PHYS_0001", "PHYS_0001 PHYS_0010", ""},
		{"PHYS_0004..PHYS_0010,~PHYS_0005..PHYS_0010", "PHYS_0004", ""},
		{"PHYS_0099", "", "no page PHYS_0099"},
		{"PHYS_0001..", "", "is not a range"},
		{"a,,b", "", "an empty item"},
		{"[", "", "syntax error"},
	} {
		sel, err := ParsePages(c.sel)
		var keep []int
		if err == nil {
			keep, err = sel.Apply(ids)
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.sel, err, c.err)
			}
			continue
		}
		var got []string
		for _, i := range keep {
			got = append(got, ids[i])
		}
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%q: %v %v, want %s", c.sel, got, err, c.want)
		}
	}
}

// TestRelPath: a text file keeps its path in the book under the output
// folder, whatever its location, and never leaves it.
func TestRelPath(t *testing.T) {
	for _, c := range []struct {
		book string
		text Text
		want string
	}{
		{"/data/b1/mets.xml", Text{Location: "/data/b1/ocr/0001.xml"}, "ocr/0001.xml"},
		{"/data/b1/mets.xml", Text{Location: "/data/other/0001.xml"}, "external/data/other/0001.xml"},
		{"https://a.example/b1/mets.xml", Text{Location: "https://a.example/b1/alto/1.xml"}, "alto/1.xml"},
		{"https://a.example/b1/mets.xml", Text{Location: "https://cdn.example/x/../1"}, "cdn.example/x/1.xml"},
		{"https://a.example/b1/manifest", Text{Location: "https://a.example/b1/text?page=1", Format: HOCR}, "text_page_1.hocr"},
		{"https://a.example/b1/mets.xml", Text{Location: "https://a.example/b1/%2e%2e/%2e%2e/etc/passwd"}, "etc/passwd.xml"}, // ".." segments are dropped
		// A book at the host's root: its files are beside it (they were
		// given the host as a folder, twice for a book of a list).
		{"http://127.0.0.1:8793/mets.xml", Text{Location: "http://127.0.0.1:8793/alto/p2.xml"}, "alto/p2.xml"},
		{"http://127.0.0.1:8793/mets.xml", Text{Location: "http://127.0.0.1:8794/alto/p2.xml"}, "127.0.0.1_8794/alto/p2.xml"},
	} {
		if got := RelPath(c.book, c.text); got != c.want {
			t.Errorf("RelPath(%s, %s) = %s, want %s", c.book, c.text.Location, got, c.want)
		}
	}
}

func TestProblems(t *testing.T) {
	ps := []Problem{{Page: "P1", File: "F1", Reason: "a"}, {Reason: "b"}, {Page: "P3", Reason: "c"}, {Reason: "d"}}
	for _, c := range []struct {
		ps   []Problem
		n    int
		want string
	}{
		{nil, 3, ""},
		{ps[:2], 3, "P1: F1: a; b"},
		{ps, 3, "P1: F1: a; b; P3: c; and 1 more"},
		{ps, 4, "P1: F1: a; b; P3: c; d"},
	} {
		if got := Problems(c.ps, c.n); got != c.want {
			t.Errorf("Problems(%v, %d) = %q, want %q", c.ps, c.n, got, c.want)
		}
	}
}

// utf16le and utf16be encode s as UTF-16.
func utf16le(s string) string { return utf16of(s, binary.LittleEndian) }
func utf16be(s string) string { return utf16of(s, binary.BigEndian) }

func utf16of(s string, order binary.AppendByteOrder) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = order.AppendUint16(b, u)
	}
	return string(b)
}

// TestLatin1Reader: bytes read as ISO-8859-1 come out as UTF-8 whole,
// whatever the size of the reads (one byte at a time included).
func TestLatin1Reader(t *testing.T) {
	for _, size := range []int{1, 2, 3, 64} {
		l := latin1Reader(strings.NewReader("Stra\xdfe P\xf8\xedbram"))
		var got []byte
		buf := make([]byte, size)
		for {
			n, err := l.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		if string(got) != "Straße Pøíbram" {
			t.Errorf("reads of %d: %q", size, got)
		}
	}
}

// An answer in place of a text file (an error page, JSON, nothing) is told
// from a text file of another format (ABBYY, TEI: the book's own, left out
// for good rather than fetched again by every run).
func TestErrorPage(t *testing.T) {
	for _, tc := range []struct {
		data string
		want bool
	}{
		{"<!DOCTYPE html><html><body>503</body></html>", true},
		{`{"error": "quota"}`, true},
		{"  ", true},
		{"Service unavailable", true},
		{`<?xml version="1.0"?><document xmlns="http://www.abbyy.com/FineReader_xml/FineReader10-schema-v1.xml"><page/></document>`, false},
		{`<TEI xmlns="http://www.tei-c.org/ns/1.0"><text/></TEI>`, false},
	} {
		if got := errorPage([]byte(tc.data)); got != tc.want {
			t.Errorf("errorPage(%.30q) = %v, want %v", tc.data, got, tc.want)
		}
	}
}
