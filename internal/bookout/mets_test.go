package bookout

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"archivekit/internal/book"
)

// realMETS are the METS files of the book reader's tests (sources in
// internal/book/testdata/SOURCES.md).
var realMETS = []string{
	"ocrd-kant/mets.xml",
	"europeana-18140402_1/18140402_1-METS.xml",
	"alma-kuleuven-9940609919905131.xml",
	"dfgviewer-minimal_mets_iipimage.xml",
	"gdz-kleiuniv_PPN517154005.xml",
	"goobi-hu-BV048249088.xml",
	"goobi-ulb-74241.xml",
	"kitodo-mets_newspaper.xml",
	"kitodo-mets_with_pages.xml",
}

// translatedFiles lists one translated file per page of the book that
// internal/book reads from path, named after the page's first text file
// (or the page), and the group name GroupName gives.
func translatedFiles(t *testing.T, path string, src []byte) ([]METSFile, string) {
	t.Helper()
	b, err := book.Read(context.Background(), path, book.Options{Text: book.TextDeclared})
	if err != nil {
		t.Fatal(err)
	}
	uses, err := Uses(src)
	if err != nil {
		t.Fatal(err)
	}
	source := ""
	var files []METSFile
	for _, p := range b.Pages {
		f := METSFile{PageID: p.ID, MIMEType: "application/alto+xml"}
		if len(p.Texts) > 0 {
			f.SourceID, source = p.Texts[0].FileID, p.Texts[0].Group
		}
		f.Href = "translated/" + firstOf(f.SourceID, p.ID) + "_en.xml"
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatal("no pages")
	}
	return files, GroupName(uses, source, "en")
}

// TestMETSRoundTrip: on every real METS, AddToMETS adds one fileGrp named
// after the book's convention, one fptr per page and one agent; the book
// reader finds the new files on their pages; RemoveFromMETS gives back the
// input byte for byte; the output has no METS schema error (xmllint, the
// official METS 1.12.1 schema) its input did not have.
func TestMETSRoundTrip(t *testing.T) {
	for _, name := range realMETS {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "book", "testdata", "mets", name)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			files, group := translatedFiles(t, path, src)
			out, err := AddToMETS(src, files, METSOptions{Group: group, Agent: Agent{Name: "archivekit translate", Version: "1.0"}, Note: "machine translation into en (en-t-cs-t0-und)"})
			if err != nil {
				t.Fatal(err)
			}
			if name == "ocrd-kant/mets.xml" && group != "OCR-D-MT-EN" || name == "goobi-hu-BV048249088.xml" && group != "FULLTEXT_EN" {
				t.Errorf("group %q", group)
			}
			if n := bytes.Count(out, []byte(`fptr FILEID="`+idChars.ReplaceAllString(group, "_"))); n != len(files) {
				t.Errorf("%d fptrs to the new files, want %d", n, len(files))
			}
			if n := bytes.Count(out, []byte(`OTHERROLE="TRANSLATOR"`)); n != 1 {
				t.Errorf("%d agents", n)
			}
			back, err := RemoveFromMETS(out, group)
			if err != nil || !bytes.Equal(back, src) {
				t.Errorf("RemoveFromMETS did not give the input back (%v)", err)
			}
			dir := t.TempDir()
			op := filepath.Join(dir, "mets.xml")
			os.WriteFile(op, out, 0o644)
			b, err := book.Read(context.Background(), op, book.Options{Text: book.TextDeclared, TextGroups: []string{group}})
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, p := range b.Pages {
				found += len(p.Texts)
			}
			if found != len(files) {
				t.Errorf("the book reader finds %d of the %d new files", found, len(files))
			}
			in, got := schemaErrors(t, path), schemaErrors(t, op)
			for msg, n := range got {
				if n > in[msg] {
					t.Errorf("new METS schema error: %s", msg)
				}
			}
		})
	}
}

// TestMETSEdges: a page div that is self-closing or empty with an end tag,
// a METS without metsHdr and without an XLink prefix on its root, and a
// tab-indented file come back byte for byte; a group that exists or a
// page that does not is refused.
func TestMETSEdges(t *testing.T) {
	for _, src := range []string{
		"<mets xmlns=\"http://www.loc.gov/METS/\">\n\t<fileSec>\n\t\t<fileGrp USE=\"FULLTEXT\"/>\n\t</fileSec>\n\t<structMap TYPE=\"PHYSICAL\"><div ID=\"p1\"/><div ID=\"p2\"></div></structMap>\n</mets>\n",
		`<m:mets xmlns:m="http://www.loc.gov/METS/"><m:metsHdr/><m:fileSec/><m:structMap TYPE="PHYSICAL"><m:div ID="p1"><m:div ID="p2"/></m:div></m:structMap></m:mets>`,
	} {
		out, err := AddToMETS([]byte(src), []METSFile{{PageID: "p1", Href: "a&b.xml"}, {PageID: "p2", Href: "c.xml"}, {PageID: "p2", ID: "x2", Href: "d.xml"}},
			METSOptions{Group: "FULLTEXT_EN", Agent: Agent{Name: "t"}, Note: "n"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), `xlink:href="a&amp;b.xml"`) || !strings.Contains(string(out), `xmlns:xlink=`) {
			t.Errorf("FLocat:\n%s", out)
		}
		back, err := RemoveFromMETS(out, "FULLTEXT_EN")
		if err != nil || string(back) != src {
			t.Errorf("RemoveFromMETS: %v\n%s\nfrom\n%s", err, back, out)
		}
		if _, err := AddToMETS([]byte(src), []METSFile{{PageID: "p3"}}, METSOptions{Group: "G"}); err == nil {
			t.Error("unknown page accepted")
		}
	}
	if _, err := AddToMETS([]byte(`<mets><fileSec><fileGrp USE="G"/></fileSec></mets>`), nil, METSOptions{Group: "G"}); err == nil {
		t.Error("existing group accepted")
	}
}

var fileLineRE = regexp.MustCompile(`^[^:]*:\d+: `)

// schemaErrors counts xmllint's messages on path against the METS schema
// of testdata/schema (METS 1.12.1 and the XLink schema it imports from
// beside it, from PyPI ocrd; testdata/SOURCES.md).
func schemaErrors(t *testing.T, path string) map[string]int {
	t.Helper()
	tool, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint not installed")
	}
	cmd := exec.Command(tool, "--noout", "--nonet", "--schema", filepath.Join("testdata", "schema", "mets.xsd"), path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
			t.Fatalf("xmllint: %v: %s", err, stderr.String())
		}
	}
	out := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if l != "" && !strings.HasSuffix(l, " fails to validate") && !strings.HasSuffix(l, " validates") {
			out[fileLineRE.ReplaceAllString(l, "")]++
		}
	}
	return out
}

// FuzzMETSRemovable: on any document AddToMETS accepts, with one file for
// each of its first physical divs, RemoveFromMETS gives the input back.
func FuzzMETSRemovable(f *testing.F) {
	for _, name := range []string{"ocrd-kant/mets.xml", "kitodo-mets_with_pages.xml"} {
		src, err := os.ReadFile(filepath.Join("..", "book", "testdata", "mets", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte("<mets>\r\n <metsHdr></metsHdr><fileSec></fileSec><structMap TYPE='physical'><div ID='a'>\n</div><div ID='b'><mptr/></div></structMap></mets>"))
	f.Fuzz(func(t *testing.T, src []byte) {
		root, err := parseMETS(src)
		if err != nil || bytes.Contains(src, []byte("TRANSLATOR")) {
			return
		}
		s := &metsState{src: src, root: root, ids: map[string]bool{}, divs: map[string]*elem{}}
		if s.index("G") != nil {
			return
		}
		var files []METSFile
		for id := range s.divs {
			if files = append(files, METSFile{PageID: id, Href: "x.xml"}); len(files) == 3 {
				break
			}
		}
		out, err := AddToMETS(src, files, METSOptions{Group: "G", Agent: Agent{Name: "t"}})
		if err != nil {
			return
		}
		if _, err := parseTree(out); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		back, err := RemoveFromMETS(out, "G")
		if err != nil || !bytes.Equal(back, src) {
			t.Fatalf("RemoveFromMETS: %v\ngot  %q\nwant %q", err, back, src)
		}
	})
}

// TestResolveLinks: the relative hrefs of FLocat, mdRef and mptr (no URL
// scheme: paths, absolute paths, network-path references) become absolute
// URLs resolved against the METS URL, as RFC 3986 section 5.4 resolves
// them; absolute URLs of any scheme, empty hrefs, other attributes and
// hrefs inside embedded records are kept; every other byte is kept, so
// putting the listed hrefs back gives the input.
func TestResolveLinks(t *testing.T) {
	const head = `<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">`
	base, err := url.Parse("https://example.org/books/b1/mets.xml?v=2")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, in string
		// hrefs are the attributes changed, as written before and after
		hrefs   []string
		changed []string
	}{
		{"kinds of reference", head + `<mets:fileSec><mets:fileGrp USE="DEFAULT">
<mets:file ID="A"><mets:FLocat LOCTYPE="URL" xlink:href="https://example.org/a.jpg"/></mets:file>
<mets:file ID="B"><mets:FLocat LOCTYPE="URL" xlink:href="img/b.jpg"/></mets:file>
<mets:file ID="C"><mets:FLocat LOCTYPE="URL" xlink:href="file:///data/c.jpg"/></mets:file>
<mets:file ID="D"><mets:FLocat LOCTYPE="URL" xlink:href="/abs/d.xml"/></mets:file>
<mets:file ID="E"><mets:FLocat LOCTYPE="URL" xlink:href="../other/e.xml"/></mets:file>
<mets:file ID="F"><mets:FLocat LOCTYPE="URL" xlink:href="//cdn.example.net/f.xml"/></mets:file>
<mets:file ID="G"><mets:FLocat LOCTYPE="URL" xlink:href=""/></mets:file>
<mets:file ID="H"><mets:FLocat LOCTYPE="URL" xlink:href="file://./ALTO/h.xml"/></mets:file>
<mets:file ID="I"><mets:FLocat LOCTYPE="URL" xlink:href="file://localhost/data/i.xml"/></mets:file>
</mets:fileGrp></mets:fileSec></mets:mets>`, []string{
			`xlink:href="img/b.jpg"`, `xlink:href="https://example.org/books/b1/img/b.jpg"`,
			`xlink:href="/abs/d.xml"`, `xlink:href="https://example.org/abs/d.xml"`,
			`xlink:href="../other/e.xml"`, `xlink:href="https://example.org/books/other/e.xml"`,
			`xlink:href="//cdn.example.net/f.xml"`, `xlink:href="https://cdn.example.net/f.xml"`,
			// as the book reader reads a METS from a URL (Europeana's file://./ALTO/…)
			`xlink:href="file://./ALTO/h.xml"`, `xlink:href="https://example.org/books/b1/ALTO/h.xml"`,
		}, []string{"img/b.jpg", "/abs/d.xml", "../other/e.xml", "//cdn.example.net/f.xml", "file://./ALTO/h.xml"}},
		{"quotes, spaces, entities, other prefix", `<m:mets xmlns:m="http://www.loc.gov/METS/" xmlns:xl="http://www.w3.org/1999/xlink"><m:fileSec><m:fileGrp USE="X">
<m:file ID="A"><m:FLocat xl:href = ' a b/p&amp;q.xml ' LOCTYPE='OTHER' xl:title="a.xml"></m:FLocat></m:file>
</m:fileGrp></m:fileSec></m:mets>`, []string{
			`xl:href = ' a b/p&amp;q.xml '`, `xl:href = 'https://example.org/books/b1/a%20b/p&amp;q.xml'`,
		}, []string{"a b/p&q.xml"}},
		{"mdRef and mptr, not embedded records", head + `<mets:dmdSec ID="D1"><mets:mdRef LOCTYPE="URL" MDTYPE="MODS" xlink:href="mods.xml"/></mets:dmdSec>
<mets:dmdSec ID="D2"><mets:mdWrap MDTYPE="OTHER"><mets:xmlData><mets:FLocat xlink:href="kept.xml"/></mets:xmlData></mets:mdWrap></mets:dmdSec>
<mets:structMap TYPE="LOGICAL"><mets:div><mets:mptr LOCTYPE="URL" xlink:href="../parent.xml"/></mets:div></mets:structMap></mets:mets>`, []string{
			`xlink:href="mods.xml"`, `xlink:href="https://example.org/books/b1/mods.xml"`,
			`xlink:href="../parent.xml"`, `xlink:href="https://example.org/books/parent.xml"`,
		}, []string{"mods.xml", "../parent.xml"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := strings.NewReplacer(c.hrefs...).Replace(c.in)
			got, changed, err := ResolveLinks([]byte(c.in), base)
			if err != nil || string(got) != want {
				t.Fatalf("ResolveLinks: %v\ngot  %s\nwant %s", err, got, want)
			}
			if strings.Join(changed, "|") != strings.Join(c.changed, "|") {
				t.Errorf("changed %q, want %q", changed, c.changed)
			}
		})
	}
	for _, bad := range []string{"<mets:mets", head + `<mets:fileSec><mets:file><mets:FLocat xlink:href="a%zz.xml"/></mets:file></mets:fileSec></mets:mets>`} {
		if _, _, err := ResolveLinks([]byte(bad), base); err == nil {
			t.Errorf("ResolveLinks(%q): no error", bad)
		}
	}
}

// FuzzResolveLinks: the output of ResolveLinks parses, has the input's
// elements with the input's attributes, the hrefs it lists resolved and
// nothing else changed, and resolving it again changes nothing.
func FuzzResolveLinks(f *testing.F) {
	src, err := os.ReadFile(filepath.Join("..", "book", "testdata", "mets", "ocrd-kant", "mets.xml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(src)
	f.Add([]byte(`<mets xmlns:x="http://www.w3.org/1999/xlink"><fileSec><FLocat x:href = ' a&amp;b ' x:href2="c"/><mdRef href="/d"/><xmlData><FLocat href="e"/></xmlData></fileSec></mets>`))
	base, _ := url.Parse("http://example.org/a/b/mets.xml")
	f.Fuzz(func(t *testing.T, src []byte) {
		out, changed, err := ResolveLinks(src, base)
		if err != nil {
			return
		}
		in, _ := parseMETS(src)
		res, err := parseMETS(out)
		if err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		var ins, outs []*elem
		in.walk(func(e *elem) bool { ins = append(ins, e); return true })
		res.walk(func(e *elem) bool { outs = append(outs, e); return true })
		if len(ins) != len(outs) {
			t.Fatalf("%d elements, then %d", len(ins), len(outs))
		}
		n := 0
		for i, e := range ins {
			if e.name != outs[i].name || len(e.attrs) != len(outs[i].attrs) {
				t.Fatalf("element %d: %v %d attributes, then %v %d", i, e.name, len(e.attrs), outs[i].name, len(outs[i].attrs))
			}
			for k, a := range e.attrs {
				b := outs[i].attrs[k]
				if a == b {
					continue
				}
				u, err := url.Parse(strings.TrimSpace(a.Value))
				var want string
				if err == nil {
					want, _ = resolveHref(u, base)
				}
				if a.Name != b.Name || a.Name.Local != "href" || err != nil || b.Value != want {
					t.Fatalf("attribute %v=%q became %v=%q", a.Name, a.Value, b.Name, b.Value)
				}
				n++
			}
		}
		if n != len(changed) {
			t.Fatalf("%d hrefs changed, %d listed", n, len(changed))
		}
		again, more, err := ResolveLinks(out, base)
		if err != nil || len(more) != 0 || !bytes.Equal(again, out) {
			t.Fatalf("resolved again: %v, %q", err, more)
		}
	})
}
