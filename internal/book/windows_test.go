package book

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWindowsWrittenBooks: books as Windows tools write them are read: a
// METS file in UTF-16 (with a byte-order mark or without) or declared
// windows-1250, a IIIF manifest with a UTF-8 byte-order mark (PowerShell's
// -Encoding UTF8), hrefs with backslashes; a drive-letter or UNC href is
// named as a Windows path. Each of these was not read as a book, or every
// page failed.
func TestWindowsWrittenBooks(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"images/0001.tif", "images/0002.tif"} {
		p := filepath.Join(dir, filepath.FromSlash(n))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("II*\x00"), 0o644)
	}
	mets := func(decl, href1, href2 string) string {
		return strings.ReplaceAll(`<?xml version="1.0" encoding="`+decl+`"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
 <mets:fileSec><mets:fileGrp USE="DEFAULT">
  <mets:file ID="F1" MIMETYPE="image/tiff"><mets:FLocat LOCTYPE="URL" xlink:href="`+href1+`"/></mets:file>
  <mets:file ID="F2" MIMETYPE="image/tiff"><mets:FLocat LOCTYPE="URL" xlink:href="`+href2+`"/></mets:file>
 </mets:fileGrp></mets:fileSec>
 <mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence">
  <mets:div ID="P1" ORDER="1" ORDERLABEL="Titulní list č. 1" TYPE="page"><mets:fptr FILEID="F1"/></mets:div>
  <mets:div ID="P2" ORDER="2" TYPE="page"><mets:fptr FILEID="F2"/></mets:div>
 </mets:div></mets:structMap>
</mets:mets>
`, "\n", "\r\n")
	}
	cp1250 := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "č", "\xe8"), "í", "\xed") }
	manifest := `{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "https://example.org/m", "type": "Manifest",
 "items": [{"id": "https://example.org/c1", "type": "Canvas", "width": 10, "height": 10, "items": [{"type": "AnnotationPage", "items": [{"type": "Annotation",
  "motivation": "painting", "body": {"id": "images/0001.tif", "type": "Image"}, "target": "https://example.org/c1"}]}]}]}`
	want := []string{filepath.Join(dir, "images", "0001.tif"), filepath.Join(dir, "images", "0002.tif")}
	for _, tc := range []struct {
		name, file, data string
		pages            []string
		label            string
	}{
		{"METS UTF-16LE with BOM", "m1.xml", "\xff\xfe" + utf16le(mets("UTF-16", "images/0001.tif", "images/0002.tif")), want, "Titulní list č. 1"},
		{"METS UTF-16BE without BOM", "m2.xml", utf16be(mets("UTF-16", "images/0001.tif", "images/0002.tif")), want, "Titulní list č. 1"},
		{"METS windows-1250", "m3.xml", cp1250(mets("windows-1250", "images/0001.tif", "images/0002.tif")), want, "Titulní list č. 1"},
		{"METS hrefs with backslashes", "m4.xml", mets("UTF-8", `images\0001.tif`, `.\images\0002.tif`), want, "Titulní list č. 1"},
		{"manifest with a UTF-8 BOM", "m.json", "\ufeff" + manifest, want[:1], ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.file)
			os.WriteFile(p, []byte(tc.data), 0o644)
			head, _ := ReadHead(p)
			if !Looks(head) {
				t.Errorf("Looks = false")
			}
			b, err := Read(context.Background(), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, pg := range b.Pages {
				if pg.Image != nil {
					got = append(got, pg.Image.Location)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.pages) || len(b.Problems) > 0 {
				t.Errorf("pages %q, problems %v; want %q", got, b.Problems, tc.pages)
			}
			if tc.label != "" && b.Pages[0].Label != tc.label {
				t.Errorf("label %q, want %q", b.Pages[0].Label, tc.label)
			}
		})
	}
	// A drive letter or a share names a file on the machine the METS file
	// was written on: said so, per page.
	p := filepath.Join(dir, "m5.xml")
	os.WriteFile(p, []byte(mets("UTF-8", `C:\scans\0001.tif`, `\\server\share\0002.tif`)), 0o644)
	b, err := Read(context.Background(), p, Options{})
	if err == nil && len(b.Problems) < 2 {
		t.Fatalf("Windows paths read: %+v", b)
	}
	if s := fmt.Sprint(err, b); strings.Count(s, "a Windows path") < 1 {
		t.Errorf("the Windows paths are not named as such: %s", s)
	}
	// A text file named so is unread, counted failed by the tools (it was
	// left out without a word).
	withText := strings.Replace(mets("UTF-8", "images/0001.tif", "images/0002.tif"), `</mets:fileGrp>`,
		`</mets:fileGrp><mets:fileGrp USE="FULLTEXT"><mets:file ID="T1" MIMETYPE="application/alto+xml"><mets:FLocat LOCTYPE="URL" xlink:href="C:\ocr\0001.xml"/></mets:file></mets:fileGrp>`, 1)
	withText = strings.Replace(withText, `<mets:fptr FILEID="F1"/>`, `<mets:fptr FILEID="F1"/><mets:fptr FILEID="T1"/>`, 1)
	p = filepath.Join(dir, "m6.xml")
	os.WriteFile(p, []byte(withText), 0o644)
	b, err = Read(context.Background(), p, Options{Text: TextDeclared})
	if err != nil {
		t.Fatal(err)
	}
	if u := b.Pages[0].Unread; len(u) != 1 || u[0].Location != `C:\ocr\0001.xml` || u[0].Err == nil || !strings.Contains(u[0].Err.Error(), "a Windows path") {
		t.Errorf("page 1's unread text files: %+v", u)
	}
}

// TestLooksAtMETSInAnotherNamespace: a METS file whose namespace is not
// METS's (its slash left off) looks like a book, so that a folder run
// reads it and says what is wrong (it was passed over without a word).
func TestLooksAtMETSInAnotherNamespace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mets.xml")
	os.WriteFile(p, []byte(`<mets:mets xmlns:mets="http://www.loc.gov/METS"><mets:structMap/></mets:mets>`), 0o644)
	head, _ := ReadHead(p)
	if !Looks(head) {
		t.Error("Looks = false")
	}
	_, err := Read(context.Background(), p, Options{})
	if err == nil || !strings.Contains(err.Error(), "{http://www.loc.gov/METS}mets") {
		t.Errorf("Read: %v, want the root element's namespace named", err)
	}
	if Looks([]byte(`<record xmlns="urn:x"><title>mets</title></record>`)) {
		t.Error("a record mentioning mets looks like a book")
	}
}

// TestListsWrittenOnWindows: a list saved as UTF-16 (Notepad's "Unicode")
// or ending with a Ctrl-Z is read as a list.
func TestListsWrittenOnWindows(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mets.xml"), []byte(`<mets:mets xmlns:mets="http://www.loc.gov/METS/"/>`), 0o644)
	text := "# books\r\nhttps://example.org/iiif/b1/manifest.json\r\nmets.xml\r\n"
	for name, data := range map[string]string{
		"utf16le.txt": "\xff\xfe" + utf16le(text),
		"utf16be.txt": "\xfe\xff" + utf16be(text),
		"ctrlz.txt":   text + "\x1a",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		if !IsList(p) {
			t.Errorf("%s: IsList = false", name)
		}
		got, err := ReadList(p)
		if err != nil || len(got) != 2 || got[0].Location != "https://example.org/iiif/b1/manifest.json" || got[1].Location != filepath.Join(dir, "mets.xml") {
			t.Errorf("%s: ReadList = %v, %v", name, got, err)
		}
	}
}
