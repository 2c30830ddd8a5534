package book

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"archivekit/internal/fetch"
)

const altoDoc = `<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout/></alto>`
const pageDoc = `<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"><Page/></PcGts>`
const hocrDoc = `<!DOCTYPE html><html><head><meta name="ocr-system" content="tesseract 5"/></head><body><div class="ocr_page" title="bbox 0 0 10 10"></div></body></html>`
const teiDoc = `<TEI xmlns="http://www.tei-c.org/ns/1.0"/>`

// TestMETSFeatures reads a METS file written to show what producers do:
// groups named on the file (USE) rather than the group, a group without
// USE, fptrs through area, declarations that do not match the file, files
// without FLocat, links to nothing.
func TestMETSFeatures(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"txt/p1.xml": altoDoc, "txt/p2.xml": pageDoc, "txt/p3.hocr": hocrDoc, "txt/p4.xml": teiDoc,
		"sub/../txt/p5.xml": altoDoc,
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mets := `<?xml version="1.0" encoding="UTF-8"?>
<m:mets xmlns:m="http://www.loc.gov/METS/" xmlns:xl="http://www.w3.org/1999/xlink" OBJID="book-1">
 <m:fileSec>
  <m:fileGrp>
   <m:file ID="IMG1" USE="SCANS" MIMETYPE="image/jpeg"><m:FLocat LOCTYPE="URL" xl:href="./img/1.jpg"/></m:file>
   <m:file ID="IMG2" USE="SCANS" MIMETYPE="image/jpeg"><m:FLocat LOCTYPE="URL" xl:href="img/2.jpg"/></m:file>
   <m:file ID="IMG3" USE="SCANS"><m:FLocat LOCTYPE="URL" xl:href="img/3.tif"/></m:file>
   <m:file ID="IMG4" USE="SCANS"><m:FContent><m:binData>AAAA</m:binData></m:FContent></m:file>
  </m:fileGrp>
  <m:fileGrp USE="THUMBS">
   <m:file ID="TH1" MIMETYPE="image/jpeg"><m:FLocat LOCTYPE="URL" xl:href="th/1.jpg"/></m:file>
  </m:fileGrp>
  <m:fileGrp ID="noUse">
   <m:file ID="T1" MIMETYPE="application/alto+xml"><m:FLocat LOCTYPE="URL" xl:href="txt/p1.xml"/></m:file>
   <m:file ID="T2" MIMETYPE="application/alto+xml"><m:FLocat LOCTYPE="URL" xl:href="file://txt/p2.xml"/></m:file>
   <m:file ID="T3" MIMETYPE="text/html"><m:FLocat LOCTYPE="URL" xl:href="txt/p3.hocr"/></m:file>
   <m:file ID="T4" MIMETYPE="text/xml"><m:FLocat LOCTYPE="URL" xl:href="txt/p4.xml"/></m:file>
   <m:file ID="T5" MIMETYPE="text/xml"><m:FLocat LOCTYPE="URL" xl:href="sub/../txt/p5.xml"/></m:file>
   <m:file ID="T6" MIMETYPE="application/alto+xml"><m:FLocat LOCTYPE="URL" xl:href="txt/missing.xml"/></m:file>
  </m:fileGrp>
 </m:fileSec>
 <m:structMap TYPE="LOGICAL"><m:div ID="L0" TYPE="monograph"><m:div ID="L1" TYPE="binding"><m:div ID="L2" TYPE="cover_front"/></m:div></m:div></m:structMap>
 <m:structMap TYPE="PHYSICAL">
  <m:div ID="seq" TYPE="physSequence">
   <m:div ID="P0" ORDER="0" TYPE="page"><m:fptr FILEID="TH1"/></m:div>
   <m:div ID="P2" ORDER="2" ORDERLABEL="ii" TYPE="page"><m:fptr FILEID="IMG2"/><m:fptr FILEID="T2"/><m:fptr FILEID="T6"/></m:div>
   <m:div ID="P1" ORDER="1" ORDERLABEL="i" TYPE="page"><m:fptr><m:area FILEID="IMG1"/></m:fptr><m:fptr><m:seq><m:area FILEID="T1"/></m:seq></m:fptr><m:fptr FILEID="T5"/></m:div>
   <m:div ID="P3" ORDER="3" TYPE="page"><m:fptr FILEID="IMG3"/><m:fptr FILEID="T3"/><m:fptr FILEID="T4"/><m:fptr FILEID="NOPE"/></m:div>
   <m:div ID="P4" ORDER="4" TYPE="page"><m:fptr FILEID="IMG4"/></m:div>
  </m:div>
 </m:structMap>
 <m:structLink><m:smLink xl:from="L2" xl:to="P0"/><m:smLink xl:from="L0" xl:to="seq"/></m:structLink>
</m:mets>`
	path := filepath.Join(dir, "mets.xml")
	if err := os.WriteFile(path, []byte(mets), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Read(context.Background(), path, Options{SkipTypes: []string{"binding"}})
	if err != nil {
		t.Fatal(err)
	}
	if b.ID != "book-1" || b.ImageGroup != "SCANS" {
		t.Errorf("ID %q, image group %q", b.ID, b.ImageGroup)
	}
	var got []string
	for _, p := range b.Pages {
		line := p.ID + " " + p.Order + " " + p.Label
		if p.Image != nil {
			line += " " + strings.TrimPrefix(p.Image.Location, dir+string(filepath.Separator))
		}
		for _, tx := range p.Texts {
			line += " " + string(tx.Format) + ":" + strings.TrimPrefix(tx.Location, dir+string(filepath.Separator))
		}
		got = append(got, line)
	}
	want := []string{
		"P1 1 i img/1.jpg ALTO:txt/p1.xml ALTO:txt/p5.xml",
		"P2 2 ii img/2.jpg PAGE:txt/p2.xml",
		"P3 3  img/3.tif hOCR:txt/p3.hocr",
		"P4 4 ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("pages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var problems []string
	for _, p := range b.Problems {
		problems = append(problems, strings.ReplaceAll(p.String(), dir, "DIR"))
	}
	wantProblems := []string{
		"P0: skipped: logical div L2, inside a div of TYPE binding",
		"P2: T2: declared ALTO, is PAGE",
		"P2: T6: cannot read: stat DIR/txt/missing.xml: no such file or directory",
		"P3: T4: not ALTO, PAGE or hOCR (root element TEI in namespace http://www.tei-c.org/ns/1.0): left out",
		"P3: NOPE: fptr to a file the fileSec does not hold",
		"P4: IMG4: skipped: content embedded (FContent), no FLocat",
		// not "P4: no image in fileGrp SCANS": a reader of the text files
		// (translate) does not need the page's image (said for the
		// classifier's reader, Text: TextNone)
	}
	if strings.Join(problems, "\n") != strings.Join(wantProblems, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(wantProblems, "\n"))
	}
	// The file that cannot be read is the page's Unread, with its error,
	// for the caller to fail (not a page without text).
	for _, p := range b.Pages {
		if p.ID == "P2" && (len(p.Unread) != 1 || !strings.HasSuffix(p.Unread[0].Location, "missing.xml") || !errors.Is(p.Unread[0].Err, fs.ErrNotExist)) {
			t.Errorf("P2 unread %+v, want txt/missing.xml with its error", p.Unread)
		}
	}

	// TextNone lists no text and reads none; an explicit group wins
	b, err = Read(context.Background(), path, Options{Text: TextNone, ImageGroup: "THUMBS"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Pages[0].ID != "P0" || b.Pages[0].Image == nil || len(b.Pages[1].Texts) != 0 {
		t.Errorf("TextNone, THUMBS: %+v", b.Pages[:2])
	}
	// A reader for the images says which pages have none.
	var none []string
	for _, p := range b.Problems {
		if strings.Contains(p.Reason, "no image in fileGrp THUMBS") {
			none = append(none, p.Page)
		}
	}
	if strings.Join(none, ",") != "P1,P2,P3,P4" {
		t.Errorf("pages said to have no THUMBS image: %v", none)
	}
}

// TestRemoteMETS reads a METS file from a loopback server: hrefs resolve
// against its URL, text files are fetched (once) to be sniffed, links to
// private addresses are refused unless the policy allows them, and a
// file:// href in a remote document is refused.
func TestRemoteMETS(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/book/", http.StripPrefix("/book/", http.FileServer(http.Dir("testdata/mets/ocrd-kant"))))
	mux.HandleFunc("/evil/mets.xml", func(w http.ResponseWriter, r *http.Request) {
		data, _ := os.ReadFile("testdata/mets/ocrd-kant/mets.xml")
		w.Write(bytes.Replace(data, []byte(`xlink:href="OCR-D-IMG/INPUT_0017.tif"`), []byte(`xlink:href="file:///etc/passwd"`), 1))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	f := fetch.New(fetch.Policy{Private: fetch.PrivateAllowed}, nil)
	b, err := Read(context.Background(), srv.URL+"/book/mets.xml", Options{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Remote || len(b.Pages) != 2 || b.Pages[0].Image.Location != srv.URL+"/book/OCR-D-IMG/INPUT_0017.tif" ||
		len(b.Pages[1].Texts) != 2 || b.Pages[1].Texts[1].Location != srv.URL+"/book/OCR-D-GT-ALTO/PAGE_0020_ALTO.xml" || !b.Pages[1].Texts[1].Sniffed {
		t.Fatalf("remote book: %+v", b)
	}
	if n, _ := f.Fetched(); n != 5 {
		t.Errorf("%d requests, want 5 (the METS and four text files): %v", n, f.Log())
	}
	if _, err := f.GetLinked(context.Background(), b.Pages[1].Texts[1].Location); err != nil {
		t.Error(err)
	}
	if n, _ := f.Fetched(); n != 5 {
		t.Errorf("a text file fetched twice: %d requests", n)
	}

	// the default policy: the METS URL was given, its links were not
	b, err = Read(context.Background(), srv.URL+"/book/mets.xml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Problems) != 4 || !strings.Contains(b.Problems[0].Reason, "address in a private range refused") {
		t.Errorf("default policy: %v", b.Problems)
	}

	b, err = Read(context.Background(), srv.URL+"/evil/mets.xml", Options{Text: TextNone})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Problems) != 2 || b.Problems[0].String() != "PHYS_0017: INPUT_0017: file:///etc/passwd: a file:// location in a remote document" {
		t.Errorf("file:// in a remote METS: %v", b.Problems)
	}
}

// TestRemoteMETSFetchLater: with FetchLater no remote text file is
// fetched, whatever the METS says of it: the book reads with one request,
// the METS file's. The files whose format the METS declares (OCR-D's PAGE
// and ALTO MIMETYPEs) read as with whole files (Sniffed aside); those it
// says nothing of (a group and MIMETYPE that name no text format) are
// listed all the same, in the same places, with no format, for the caller
// to tell by their content (was: their first 64 KiB fetched to tell them).
func TestRemoteMETSFetchLater(t *testing.T) {
	mets, err := os.ReadFile("testdata/mets/ocrd-kant/mets.xml")
	if err != nil {
		t.Fatal(err)
	}
	// the PAGE group undeclared: a group name and MIMETYPE that say nothing
	undeclared := strings.NewReplacer(`USE="OCR-D-GT-PAGE"`, `USE="GT"`, `MIMETYPE="application/vnd.prima.page+xml"`, `MIMETYPE="application/xml"`).Replace(string(mets))
	files := http.FileServer(http.Dir("testdata/mets/ocrd-kant"))
	srv := httptest.NewServer(http.StripPrefix("/book/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "undeclared.xml" {
			w.Write([]byte(undeclared))
			return
		}
		files.ServeHTTP(w, r)
	})))
	defer srv.Close()
	f := fetch.New(fetch.Policy{Private: fetch.PrivateAllowed}, nil)
	for _, c := range []struct {
		mets    string
		untold  int // text files listed without a format
		perPage int // text files of each page
	}{{"mets.xml", 0, 2}, {"undeclared.xml", 2, 2}} {
		whole, err := Read(context.Background(), srv.URL+"/book/"+c.mets, Options{Fetcher: f.Fresh()})
		if err != nil {
			t.Fatal(err)
		}
		later := f.Fresh()
		b, err := Read(context.Background(), srv.URL+"/book/"+c.mets, Options{Fetcher: later, FetchLater: true})
		if err != nil {
			t.Fatal(err)
		}
		untold := 0
		for i := range b.Pages {
			for j := range b.Pages[i].Texts {
				bt, wt := &b.Pages[i].Texts[j], whole.Pages[i].Texts[j]
				if bt.Sniffed {
					t.Errorf("%s: %s sniffed with FetchLater", c.mets, bt.Location)
				}
				if bt.Format == "" {
					untold++
					if !strings.Contains(bt.Location, "/OCR-D-GT-PAGE/") || wt.Format != PAGE {
						t.Errorf("%s: %s listed without a format; read whole it is %s", c.mets, bt.Location, wt.Format)
					}
					bt.Format = wt.Format
				}
				bt.Sniffed = wt.Sniffed
			}
		}
		if !reflect.DeepEqual(b, whole) || untold != c.untold || len(b.Pages) == 0 || len(b.Pages[0].Texts) != c.perPage {
			t.Errorf("%s read with FetchLater (%d text files without a format, want %d):\n%+v\nwith whole files:\n%+v", c.mets, untold, c.untold, b, whole)
		}
		if log := later.Log(); len(log) != 1 {
			t.Errorf("%s: %d requests, want 1 (the METS file): %+v", c.mets, len(log), log)
		}
	}
}

// TestMETSInOAIPMH: a METS record inside an OAI-PMH GetRecord answer, as
// Kitodo and Goobi publish them, is read.
func TestMETSInOAIPMH(t *testing.T) {
	data, err := os.ReadFile("testdata/mets/kitodo-mets_with_pages.xml")
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.TrimSpace(data)
	if i := bytes.Index(body, []byte("?>")); bytes.HasPrefix(body, []byte("<?xml")) && i > 0 {
		body = body[i+2:]
	}
	oai := `<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><GetRecord><record><header><identifier>oai:x:1</identifier></header>
<metadata>` + string(body) + `</metadata></record></GetRecord></OAI-PMH>`
	path := filepath.Join(t.TempDir(), "oai.xml")
	if err := os.WriteFile(path, []byte(oai), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Read(context.Background(), path, Options{Text: TextDeclared})
	if err != nil {
		t.Fatal(err)
	}
	if b.Kind != METS || len(b.Pages) != 4 || b.ImageGroup != "DEFAULT" || len(b.Pages[3].Texts) != 1 {
		t.Errorf("%+v", b)
	}
}

// TestMETSWithoutImages: a METS of text files alone says "no fileGrp
// holds images" to a reader of the images (the classifier), and nothing to
// a reader of the text files (translate), which has all it needs.
func TestMETSWithoutImages(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p1.xml"), []byte(altoDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	mets := filepath.Join(dir, "mets.xml")
	if err := os.WriteFile(mets, []byte(`<?xml version="1.0"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
<mets:fileSec><mets:fileGrp USE="FULLTEXT"><mets:file ID="T1" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="p1.xml"/></mets:file></mets:fileGrp></mets:fileSec>
<mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence"><mets:div ID="P1" TYPE="page"><mets:fptr FILEID="T1"/></mets:div></mets:div></mets:structMap>
</mets:mets>`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode TextMode
		want string
	}{
		{TextNone, "no fileGrp holds images"},
		{TextSniff, ""},
	} {
		b, err := Read(context.Background(), mets, Options{Text: c.mode})
		if err != nil {
			t.Fatal(err)
		}
		if got := Problems(b.Problems, 5); got != c.want {
			t.Errorf("text mode %v: problems %q, want %q", c.mode, got, c.want)
		}
	}
}

// A file of the kind a reader takes that no page lists is named among the
// book's problems, one problem a fileGrp, never lost silently: an image
// of the image group for a reader of images, a file that may be text in
// the groups text is read from for a reader of text. A page selection does
// not make the other pages' files unlisted.
func TestMETSFilesListedByNoPage(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"t1.xml", "t2.xml", "t3.xml", "n1.xml", "n2.xml", "n3.xml", "n4.xml"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(altoDoc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mets := filepath.Join(dir, "mets.xml")
	if err := os.WriteFile(mets, []byte(`<?xml version="1.0"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
<mets:fileSec>
 <mets:fileGrp USE="DEFAULT">
  <mets:file ID="I1" MIMETYPE="image/jpeg"><mets:FLocat LOCTYPE="URL" xlink:href="i1.jpg"/></mets:file>
  <mets:file ID="I2" MIMETYPE="image/jpeg"><mets:FLocat LOCTYPE="URL" xlink:href="i2.jpg"/></mets:file>
  <mets:file ID="I9" MIMETYPE="image/jpeg"><mets:FLocat LOCTYPE="URL" xlink:href="cover.jpg"/></mets:file>
 </mets:fileGrp>
 <mets:fileGrp USE="FULLTEXT">
  <mets:file ID="T1" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="t1.xml"/></mets:file>
  <mets:file ID="T2" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="t2.xml"/></mets:file>
  <mets:file ID="T3" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="t3.xml"/></mets:file>
 </mets:fileGrp>
 <mets:fileGrp USE="NOTES">
  <mets:file ID="N1" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="n1.xml"/></mets:file>
  <mets:file ID="N2" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="n2.xml"/></mets:file>
  <mets:file ID="N3" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="n3.xml"/></mets:file>
  <mets:file ID="N4" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="n4.xml"/></mets:file>
 </mets:fileGrp>
 <mets:fileGrp USE="DOWNLOAD">
  <mets:file ID="PDF" MIMETYPE="application/pdf"><mets:FLocat LOCTYPE="URL" xlink:href="book.pdf"/></mets:file>
 </mets:fileGrp>
</mets:fileSec>
<mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence">
 <mets:div ID="P1" TYPE="page"><mets:fptr FILEID="I1"/><mets:fptr FILEID="T1"/></mets:div>
 <mets:div ID="P2" TYPE="page"><mets:fptr FILEID="I2"/><mets:fptr FILEID="T2"/></mets:div>
</mets:div></mets:structMap>
</mets:mets>`), 0o644); err != nil {
		t.Fatal(err)
	}
	const (
		images = "fileGrp DEFAULT: 1 image listed by no page, not read with the book (cover.jpg)"
		text   = "fileGrp FULLTEXT: 1 file listed by no page, not read with the book (t3.xml)"
		notes  = "fileGrp NOTES: 4 files listed by no page, not read with the book (n1.xml, n2.xml, n3.xml, ...)"
	)
	for _, c := range []struct {
		name string
		opts Options
		want []string
	}{
		{"images", Options{Text: TextNone}, []string{images}},
		{"images, one page selected", Options{Text: TextNone, Pages: "P2"}, []string{images}},
		{"text", Options{Text: TextSniff}, []string{text, notes}},
		{"declared text", Options{Text: TextDeclared}, []string{text, notes}},
		{"text of one group", Options{Text: TextSniff, TextGroups: []string{"FULLTEXT"}}, []string{text}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Read(context.Background(), mets, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range b.Problems {
				got = append(got, p.String())
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("problems\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}
