package book

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tests of this file pin down what a user gets from the cases a
// mutation audit found unchecked: which pages, which image, which labels,
// in which order, and what the book says of what it left out.

// metsOf is a METS document of the fileSec groups and the PHYSICAL
// structMap's content given.
func metsOf(groups, phys string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink" OBJID="b">
<mets:fileSec>` + groups + `</mets:fileSec>
<mets:structMap TYPE="PHYSICAL">` + phys + `</mets:structMap>
</mets:mets>`
}

// grp is a fileGrp of USE use holding files, each "ID MIMETYPE href"
// ("-" for no MIMETYPE).
func grp(use string, files ...string) string {
	var b strings.Builder
	b.WriteString(`<mets:fileGrp USE="` + use + `">`)
	for _, f := range files {
		parts := strings.Fields(f)
		mime := ""
		if parts[1] != "-" {
			mime = ` MIMETYPE="` + parts[1] + `"`
		}
		fmt.Fprintf(&b, `<mets:file ID="%s"%s><mets:FLocat LOCTYPE="URL" xlink:href="%s"/></mets:file>`, parts[0], mime, strings.ReplaceAll(parts[2], "&", "&amp;"))
	}
	b.WriteString(`</mets:fileGrp>`)
	return b.String()
}

// seqOf is a physSequence root div holding the divs given.
func seqOf(divs ...string) string {
	return `<mets:div ID="SEQ" TYPE="physSequence">` + strings.Join(divs, "") + `</mets:div>`
}

// pageDiv is a page div: attrs as written (ID="P1" ORDER="1"), then an
// fptr to each file ID.
func pageDiv(attrs string, fileIDs ...string) string {
	var b strings.Builder
	b.WriteString(`<mets:div TYPE="page" ` + attrs + `>`)
	for _, id := range fileIDs {
		b.WriteString(`<mets:fptr FILEID="` + id + `"/>`)
	}
	b.WriteString(`</mets:div>`)
	return b.String()
}

// readMETSString writes doc to a METS file of its own and reads it.
func readMETSString(t *testing.T, doc string, opts Options) (*Book, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mets.xml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if opts.Fetcher == nil {
		opts.Fetcher = offline()
	}
	return Read(context.Background(), path, opts)
}

// pageLines are a book's pages as a user sees them: "ID order label
// image-file-ID image-location", one line a page.
func pageLines(b *Book) []string {
	var out []string
	for _, p := range b.Pages {
		line := fmt.Sprintf("%s order=%s label=%s", p.ID, p.Order, p.Label)
		if p.Image != nil {
			line += " " + p.Image.FileID + " " + p.Image.Location
		} else {
			line += " no image"
		}
		out = append(out, line)
	}
	return out
}

func problemLines(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestMETSPagesImagesAndLabels: which pages a METS gives, with which
// image, labels and IDs, in which order.
func TestMETSPagesImagesAndLabels(t *testing.T) {
	const ex = "https://example.org/"
	for _, c := range []struct {
		name     string
		doc      string
		opts     Options
		group    string
		pages    []string
		problems []string
		err      error
	}{
		{
			name: "two images of a page in the image group: the first fptr's is the page's",
			doc: metsOf(grp("DEFAULT", "IMG1a image/jpeg "+ex+"1a.jpg", "IMG1b image/jpeg "+ex+"1b.jpg", "IMG2a image/jpeg "+ex+"2a.jpg", "IMG2b image/jpeg "+ex+"2b.jpg"),
				seqOf(pageDiv(`ID="P1" ORDER="1"`, "IMG1a", "IMG1b"), pageDiv(`ID="P2" ORDER="2"`, "IMG2b", "IMG2a"))),
			group: "DEFAULT",
			pages: []string{"P1 order=1 label= IMG1a " + ex + "1a.jpg", "P2 order=2 label= IMG2b " + ex + "2b.jpg"},
		},
		{
			name: "two images of a page through the areas of one fptr: the first area's",
			doc: metsOf(grp("DEFAULT", "A image/jpeg "+ex+"a.jpg", "B image/jpeg "+ex+"b.jpg"),
				seqOf(`<mets:div ID="P1" TYPE="page"><mets:fptr><mets:seq><mets:area FILEID="B"/><mets:area FILEID="A"/></mets:seq></mets:fptr></mets:div>`)),
			group: "DEFAULT",
			pages: []string{"P1 order= label= B " + ex + "b.jpg"},
		},
		{
			name: "a one-page METS: the root div points to the files itself",
			doc: metsOf(grp("DEFAULT", "IMG1 image/jpeg "+ex+"1.jpg"),
				`<mets:div ID="ROOT" TYPE="physSequence" ORDERLABEL="single sheet"><mets:fptr FILEID="IMG1"/></mets:div>`),
			group: "DEFAULT",
			pages: []string{"ROOT order= label=single sheet IMG1 " + ex + "1.jpg"},
		},
		{
			name: "a root div pointing to the whole book's PDF as well as holding pages is no page",
			doc: metsOf(grp("DEFAULT", "IMG1 image/jpeg "+ex+"1.jpg", "IMG2 image/jpeg "+ex+"2.jpg")+grp("DOWNLOAD", "PDF application/pdf "+ex+"book.pdf"),
				`<mets:div ID="ROOT" TYPE="physSequence"><mets:fptr FILEID="PDF"/>`+pageDiv(`ID="P1"`, "IMG1")+pageDiv(`ID="P2"`, "IMG2")+`</mets:div>`),
			group: "DEFAULT",
			pages: []string{"P1 order= label= IMG1 " + ex + "1.jpg", "P2 order= label= IMG2 " + ex + "2.jpg"},
		},
		{
			name: "page divs without an ID are numbered in page order (ORDER), not document order",
			doc: metsOf(grp("DEFAULT", "IMG1 image/jpeg "+ex+"1.jpg", "IMG2 image/jpeg "+ex+"2.jpg", "IMG3 image/jpeg "+ex+"3.jpg"),
				seqOf(pageDiv(`ORDER="3"`, "IMG3"), pageDiv(`ORDER="1"`, "IMG1"), pageDiv(`ORDER="2"`, "IMG2"))),
			group: "DEFAULT",
			pages: []string{"#1 order=1 label= IMG1 " + ex + "1.jpg", "#2 order=2 label= IMG2 " + ex + "2.jpg", "#3 order=3 label= IMG3 " + ex + "3.jpg"},
		},
		{
			name: "a page without an ID among pages with one is numbered by its place in the book, and selected by it",
			doc: metsOf(grp("DEFAULT", "IMG1 image/jpeg "+ex+"1.jpg", "IMG3 image/jpeg "+ex+"3.jpg"),
				seqOf(pageDiv(`ID="P1" ORDER="1"`, "IMG1"), pageDiv(`ORDER="2"`, "NOPE"), pageDiv(`ID="P3" ORDER="3"`, "IMG3"))),
			opts:     Options{Text: TextNone, Pages: "#2..P3"},
			group:    "DEFAULT",
			pages:    []string{"#2 order=2 label= no image", "P3 order=3 label= IMG3 " + ex + "3.jpg"},
			problems: []string{"#2: NOPE: fptr to a file the fileSec does not hold", "#2: no image in fileGrp DEFAULT"},
		},
		{
			name: "ORDERLABEL is the label, LABEL when there is none",
			doc: metsOf(grp("DEFAULT", "I1 image/jpeg "+ex+"1.jpg", "I2 image/jpeg "+ex+"2.jpg", "I3 image/jpeg "+ex+"3.jpg", "I4 image/jpeg "+ex+"4.jpg"),
				seqOf(pageDiv(`ID="P1" ORDERLABEL="iv" LABEL="Title page"`, "I1"), pageDiv(`ID="P2" LABEL="Plate 1"`, "I2"),
					pageDiv(`ID="P3" ORDERLABEL="5"`, "I3"), pageDiv(`ID="P4" ORDERLABEL=" " LABEL="Blank"`, "I4"))),
			group: "DEFAULT",
			pages: []string{"P1 order= label=iv I1 " + ex + "1.jpg", "P2 order= label=Plate 1 I2 " + ex + "2.jpg",
				"P3 order= label=5 I3 " + ex + "3.jpg", "P4 order= label=Blank I4 " + ex + "4.jpg"},
		},
		{
			name: "the image group has images for the most pages, not the most files",
			doc: metsOf(grp("DETAILS", "D1 image/jpeg "+ex+"d1.jpg", "D2 image/jpeg "+ex+"d2.jpg", "D3 image/jpeg "+ex+"d3.jpg")+
				grp("SCANS", "S1 image/jpeg "+ex+"s1.jpg", "S2 image/jpeg "+ex+"s2.jpg"),
				seqOf(pageDiv(`ID="P1"`, "D1", "D2", "D3", "S1"), pageDiv(`ID="P2"`, "S2"))),
			group: "SCANS",
			pages: []string{"P1 order= label= S1 " + ex + "s1.jpg", "P2 order= label= S2 " + ex + "s2.jpg"},
		},
		{
			name: "groups with images for as many pages: the first in the document",
			doc: metsOf(grp("SCANS_B", "B1 image/jpeg "+ex+"b1.jpg")+grp("SCANS_A", "A2 image/jpeg "+ex+"a2.jpg"),
				seqOf(pageDiv(`ID="P1"`, "B1"), pageDiv(`ID="P2"`, "A2"))),
			opts:     Options{Text: TextNone},
			group:    "SCANS_B",
			pages:    []string{"P1 order= label= B1 " + ex + "b1.jpg", "P2 order= label= no image"},
			problems: []string{"P2: no image in fileGrp SCANS_B"},
		},
		{
			name: "a thumbnail group is taken last, whatever its page count",
			doc: metsOf(grp("THUMBS", "T1 image/jpeg "+ex+"t1.jpg", "T2 image/jpeg "+ex+"t2.jpg")+grp("SCANS", "S1 image/jpeg "+ex+"s1.jpg"),
				seqOf(pageDiv(`ID="P1"`, "T1", "S1"), pageDiv(`ID="P2"`, "T2"))),
			group: "SCANS",
			pages: []string{"P1 order= label= S1 " + ex + "s1.jpg", "P2 order= label= no image"},
		},
		{
			name: "a preferred group wins over page counts, in the order of preference",
			doc: metsOf(grp("SCANS", "S1 image/jpeg "+ex+"s1.jpg", "S2 image/jpeg "+ex+"s2.jpg")+grp("MAX", "M1 image/jpeg "+ex+"m1.jpg")+grp("default", "F2 image/jpeg "+ex+"f2.jpg"),
				seqOf(pageDiv(`ID="P1"`, "S1", "M1"), pageDiv(`ID="P2"`, "S2", "F2"))),
			group: "default",
			pages: []string{"P1 order= label= no image", "P2 order= label= F2 " + ex + "f2.jpg"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := readMETSString(t, c.doc, c.opts)
			if !errors.Is(err, c.err) || err != nil && c.err == nil {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if b.ImageGroup != c.group {
				t.Errorf("image group %q, want %q", b.ImageGroup, c.group)
			}
			sameLines(t, "pages", pageLines(b), c.pages)
			sameLines(t, "problems", problemLines(b.Problems), c.problems)
		})
	}
}

// TestMETSImageRecognition: a file of a group no preference names is an
// image by its MIMETYPE, or by its name's extension when its MIMETYPE says
// nothing (none, application/octet-stream), whatever query or fragment
// its href has; the page's image keeps its href whole.
func TestMETSImageRecognition(t *testing.T) {
	for _, c := range []struct {
		mime, href string
		image      bool
	}{
		{"application/octet-stream", "https://example.org/img/0001.jpg?x=1", true},
		{"application/octet-stream", "https://example.org/img/0001.JP2?x=1&y=2", true},
		{"-", "https://example.org/img/0001.tif#page=1", true},
		{"-", "https://example.org/img/0001.jpg", true},
		{"APPLICATION/OCTET-STREAM", "https://example.org/img/0001.png", true},
		{"image/jp2", "https://example.org/iiif/0001/full/full/0/default", true},
		{"application/octet-stream", "https://example.org/ocr/0001.xml?as=x.jpg", false},
		{"application/octet-stream", "https://example.org/img/0001", false},
		{"application/pdf", "https://example.org/img/0001.jpg", false},
		{"text/xml", "https://example.org/img/0001.tif", false},
	} {
		t.Run(c.mime+" "+c.href, func(t *testing.T) {
			doc := metsOf(grp("SCANS", "F1 "+c.mime+" "+c.href), seqOf(pageDiv(`ID="P1"`, "F1")))
			b, err := readMETSString(t, doc, Options{Text: TextNone})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"P1 order= label= no image"}
			group, problems := "", []string{"no fileGrp holds images"}
			if c.image {
				want = []string{"P1 order= label= F1 " + c.href}
				group, problems = "SCANS", nil
			}
			if b.ImageGroup != group {
				t.Errorf("image group %q, want %q", b.ImageGroup, group)
			}
			sameLines(t, "pages", pageLines(b), want)
			sameLines(t, "problems", problemLines(b.Problems), problems)
		})
	}

	// An image no page lists is named by its href, query and all.
	doc := metsOf(grp("SCANS", "F1 application/octet-stream https://example.org/1.jpg?x=1", "F2 application/octet-stream https://example.org/2.jpg?x=1"),
		seqOf(pageDiv(`ID="P1"`, "F1")))
	b, err := readMETSString(t, doc, Options{Text: TextNone})
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "problems", problemLines(b.Problems), []string{
		"fileGrp SCANS: 1 image listed by no page, not read with the book (https://example.org/2.jpg?x=1)",
	})
}

// writeJSONFiles writes files (name -> content) to a folder of their own
// and returns its path.
func writeJSONFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// iiifPageLines are a IIIF book's pages: "ID label manifest image WxH",
// then the service's "id WxH" when there is one.
func iiifPageLines(b *Book) []string {
	var out []string
	for _, p := range b.Pages {
		line := fmt.Sprintf("%s label=%s manifest=%s", p.ID, p.Label, p.Manifest)
		if img := p.Image; img != nil {
			line += fmt.Sprintf(" %s %dx%d", img.Location, img.Width, img.Height)
			if s := img.Service; s != nil {
				line += fmt.Sprintf(" service %s %dx%d %s", s.ID, s.Width, s.Height, s.Derivative(1000))
			}
		} else {
			line += " no image"
		}
		out = append(out, line)
	}
	return out
}

const (
	ctx2 = `"@context":"http://iiif.io/api/presentation/2/context.json"`
	ctx3 = `"@context":"http://iiif.io/api/presentation/3/context.json"`
)

// canvas3 is a v3 canvas of the size given ("" none: `"width":10,"height":20`)
// painted by the annotations given.
func canvas3(id, size string, annos ...string) string {
	if size != "" {
		size += ","
	}
	return `{"id":"` + id + `","type":"Canvas",` + size + `"label":{"none":["` + id[strings.LastIndex(id, "/")+1:] + `"]},
	 "items":[{"type":"AnnotationPage","items":[` + strings.Join(annos, ",") + `]}]}`
}

// anno3 is a v3 annotation: motivation ("" none) and body.
func anno3(motivation, body string) string {
	m := ""
	if motivation != "" {
		m = `"motivation":"` + motivation + `",`
	}
	return `{"type":"Annotation",` + m + `"body":` + body + `}`
}

func img3(id string) string { return `{"id":"` + id + `","type":"Image","format":"image/jpeg"}` }

func manifest3(id string, canvases ...string) string {
	return `{` + ctx3 + `,"id":"` + id + `","type":"Manifest","items":[` + strings.Join(canvases, ",") + `]}`
}

// TestIIIFPagesAndImages: which image a canvas gives, of which size, and
// which manifests of a collection are read.
func TestIIIFPagesAndImages(t *testing.T) {
	const ex = "https://example.org/"
	for _, c := range []struct {
		name     string
		files    map[string]string // read: "book.json"
		pages    []string
		problems []string
		err      error
	}{
		{
			name: "v2 choice: its default",
			files: map[string]string{"book.json": `{` + ctx2 + `,"@id":"` + ex + `m","@type":"sc:Manifest","sequences":[{"canvases":[
			  {"@id":"` + ex + `c1","@type":"sc:Canvas","label":"1r","width":100,"height":200,"images":[{"@type":"oa:Annotation","motivation":"sc:painting","resource":
			    {"@type":"oa:Choice","default":{"@id":"` + ex + `colour.jpg","@type":"dctypes:Image"},"item":[{"@id":"` + ex + `uv.jpg","@type":"dctypes:Image"},{"@id":"` + ex + `ir.jpg","@type":"dctypes:Image"}]}}]}]}]}`},
			pages: []string{ex + "c1 label=1r manifest= " + ex + "colour.jpg 100x200"},
		},
		{
			name: "v2 choice without a default: its first item",
			files: map[string]string{"book.json": `{` + ctx2 + `,"@id":"` + ex + `m","@type":"sc:Manifest","sequences":[{"canvases":[
			  {"@id":"` + ex + `c1","@type":"sc:Canvas","label":"1r","width":100,"height":200,"images":[{"@type":"oa:Annotation","motivation":"sc:painting","resource":
			    {"@type":"oa:Choice","item":[{"@id":"` + ex + `uv.jpg","@type":"dctypes:Image"},{"@id":"` + ex + `ir.jpg","@type":"dctypes:Image"}]}}]}]}]}`},
			pages: []string{ex + "c1 label=1r manifest= " + ex + "uv.jpg 100x200"},
		},
		{
			name: "v3 choice: its first item",
			files: map[string]string{"book.json": manifest3(ex+"m",
				canvas3(ex+"c1", `"width":100,"height":200`, anno3("painting", `{"type":"Choice","items":[`+img3(ex+"natural.jpg")+","+img3(ex+"xray.jpg")+`]}`)))},
			pages: []string{ex + "c1 label=c1 manifest= " + ex + "natural.jpg 100x200"},
		},
		{
			name: "v3 choice with a default: its default",
			files: map[string]string{"book.json": manifest3(ex+"m",
				canvas3(ex+"c1", `"width":100,"height":200`, anno3("painting", `{"type":"Choice","default":`+img3(ex+"xray.jpg")+`,"items":[`+img3(ex+"natural.jpg")+`]}`)))},
			pages: []string{ex + "c1 label=c1 manifest= " + ex + "xray.jpg 100x200"},
		},
		{
			name: "annotations without a motivation paint; commenting and supplementing ones do not",
			files: map[string]string{"book.json": manifest3(ex+"m",
				canvas3(ex+"c1", `"width":10,"height":20`, anno3("", img3(ex+"1.jpg"))),
				canvas3(ex+"c2", `"width":10,"height":20`, anno3("commenting", img3(ex+"note.jpg")), anno3("", img3(ex+"2.jpg"))),
				canvas3(ex+"c3", `"width":10,"height":20`, anno3("supplementing", img3(ex+"3.jpg"))),
				canvas3(ex+"c4", `"width":10,"height":20`, anno3("sc:painting", img3(ex+"4.jpg"))))},
			pages: []string{
				ex + "c1 label=c1 manifest= " + ex + "1.jpg 10x20",
				ex + "c2 label=c2 manifest= " + ex + "2.jpg 10x20",
				ex + "c3 label=c3 manifest= no image",
				ex + "c4 label=c4 manifest= " + ex + "4.jpg 10x20",
			},
			problems: []string{ex + "c3: no image"},
		},
		{
			name: "sizes: the image's, else the canvas's; a service without its own size takes the image's",
			files: map[string]string{"book.json": manifest3(ex+"m",
				// image without a size, service without one: the canvas's
				canvas3(ex+"c1", `"width":1000,"height":1500`, anno3("painting", `{"id":"`+ex+`1.jpg","type":"Image",
				  "service":[{"id":"`+ex+`iiif/1","type":"ImageService3","profile":"level2"}]}`)),
				// image with a size: its own, for the service too
				canvas3(ex+"c2", `"width":1000,"height":1500`, anno3("painting", `{"id":"`+ex+`2.jpg","type":"Image","width":800,"height":1200,
				  "service":[{"id":"`+ex+`iiif/2","type":"ImageService3","profile":"level1"}]}`)),
				// service with a size of its own: kept
				canvas3(ex+"c3", `"width":1000,"height":1500`, anno3("painting", `{"id":"`+ex+`3.jpg","type":"Image",
				  "service":[{"id":"`+ex+`iiif/3","type":"ImageService3","profile":"level2","width":4000,"height":6000}]}`)),
				// no size anywhere, a level-0 service without sizes: the full image
				canvas3(ex+"c4", "", anno3("painting", `{"id":"`+ex+`4.jpg","type":"Image",
				  "service":[{"id":"`+ex+`iiif/4","type":"ImageService3","profile":"level0"}]}`)),
				// level 0 with sizes: the smallest large enough
				canvas3(ex+"c5", `"width":3000,"height":2000`, anno3("painting", `{"id":"`+ex+`5.jpg","type":"Image",
				  "service":[{"id":"`+ex+`iiif/5","type":"ImageService3","profile":"level0","sizes":[{"width":750,"height":500},{"width":1500,"height":1000},{"width":3000,"height":2000}]}]}`)),
				// a small image at level 1: asked for in full, not upscaled
				canvas3(ex+"c6", `"width":600,"height":900`, anno3("painting", `{"id":"`+ex+`6.jpg","type":"Image",
				  "service":[{"id":"`+ex+`iiif/6","type":"ImageService3","profile":"level1"}]}`)))},
			pages: []string{
				ex + "c1 label=c1 manifest= " + ex + "1.jpg 1000x1500 service " + ex + "iiif/1 1000x1500 " + ex + "iiif/1/full/!1000,1000/0/default.jpg",
				ex + "c2 label=c2 manifest= " + ex + "2.jpg 800x1200 service " + ex + "iiif/2 800x1200 " + ex + "iiif/2/full/,1000/0/default.jpg",
				ex + "c3 label=c3 manifest= " + ex + "3.jpg 1000x1500 service " + ex + "iiif/3 4000x6000 " + ex + "iiif/3/full/!1000,1000/0/default.jpg",
				ex + "c4 label=c4 manifest= " + ex + "4.jpg 0x0 service " + ex + "iiif/4 0x0 " + ex + "iiif/4/full/max/0/default.jpg",
				ex + "c5 label=c5 manifest= " + ex + "5.jpg 3000x2000 service " + ex + "iiif/5 3000x2000 " + ex + "iiif/5/full/1500,1000/0/default.jpg",
				ex + "c6 label=c6 manifest= " + ex + "6.jpg 600x900 service " + ex + "iiif/6 600x900 " + ex + "iiif/6/full/max/0/default.jpg",
			},
		},
		{
			name: "v2 members without an id: embedded ones read, each; a reference without one said",
			files: map[string]string{"book.json": `{` + ctx2 + `,"@id":"` + ex + `coll","@type":"sc:Collection","manifests":[
			  {"@type":"sc:Manifest","label":"one","sequences":[{"canvases":[{"@id":"` + ex + `a/c1","@type":"sc:Canvas","width":1,"height":2,"images":[{"resource":{"@id":"` + ex + `a1.jpg"}}]}]}]},
			  {"@type":"sc:Manifest","label":"two","sequences":[{"canvases":[{"@id":"` + ex + `b/c1","@type":"sc:Canvas","width":1,"height":2,"images":[{"resource":{"@id":"` + ex + `b1.jpg"}}]}]}]},
			  {"@type":"sc:Manifest","label":"no id, no content"}]}`},
			pages: []string{
				ex + "a/c1 label= manifest= " + ex + "a1.jpg 1x2",
				ex + "b/c1 label= manifest= " + ex + "b1.jpg 1x2",
			},
			problems: []string{"empty location"},
		},
		{
			name: "v3 manifests embedded in a collection are read as they are; a referenced one is fetched",
			files: map[string]string{
				"book.json": `{` + ctx3 + `,"id":"` + ex + `coll","type":"Collection","items":[
				  ` + manifest3(ex+"m1", canvas3(ex+"m1/c1", `"width":1,"height":2`, anno3("painting", img3(ex+"m1-1.jpg")))) + `,
				  {"id":"m2.json","type":"Manifest"},
				  {"id":"` + ex + `sub","type":"Collection","items":[` + manifest3(ex+"m3", canvas3(ex+"m3/c1", `"width":1,"height":2`, anno3("painting", img3(ex+"m3-1.jpg")))) + `]}]}`,
				"m2.json": manifest3(ex+"m2", canvas3(ex+"m2/c1", `"width":1,"height":2`, anno3("painting", img3(ex+"m2-1.jpg")))),
			},
			pages: []string{
				ex + "m1/c1 label=c1 manifest=" + ex + "m1 " + ex + "m1-1.jpg 1x2",
				ex + "m2/c1 label=c1 manifest=" + ex + "m2 " + ex + "m2-1.jpg 1x2",
				ex + "m3/c1 label=c1 manifest=" + ex + "m3 " + ex + "m3-1.jpg 1x2",
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeJSONFiles(t, c.files)
			b, err := Read(context.Background(), filepath.Join(dir, "book.json"), Options{Fetcher: offline()})
			if !errors.Is(err, c.err) || err != nil && c.err == nil {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			sameLines(t, "pages", iiifPageLines(b), c.pages)
			sameLines(t, "problems", problemLines(b.Problems), c.problems)
		})
	}
}
