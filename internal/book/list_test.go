package book

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A list takes URLs and local books (relative to its folder), passing
// over comments, blank lines and a BOM; any other line is an error naming
// the list and the line.
func TestReadList(t *testing.T) {
	dir := t.TempDir()
	mets := `<mets:mets xmlns:mets="http://www.loc.gov/METS/"/>`
	manifest := `{"@context": "http://iiif.io/api/presentation/3/context.json", "type": "Manifest"}`
	for name, body := range map[string]string{"b1/mets.xml": mets, "m.json": manifest, "record.xml": "<record/>"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(dir, "books.txt")
	os.WriteFile(list, []byte("\ufeff# books\nhttps://example.org/iiif/b1/manifest.json\n\n  b1/mets.xml  \n"+filepath.Join(dir, "m.json")+"\n"), 0o644)
	got, err := ReadList(list)
	if err != nil {
		t.Fatal(err)
	}
	want := []ListItem{{"https://example.org/iiif/b1/manifest.json", 2}, {filepath.Join(dir, "b1", "mets.xml"), 4}, {filepath.Join(dir, "m.json"), 5}}
	if len(got) != len(want) {
		t.Fatalf("ReadList = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d = %v, want %v", i, got[i], want[i])
		}
	}
	for _, c := range []struct{ line, says string }{
		{"record.xml", "another kind of file"},
		{"missing.xml", "no such file"},
		{"ftp://example.org/mets.xml", "not an http(s) URL"},
	} {
		os.WriteFile(list, []byte("# one bad line\n"+c.line+"\n"), 0o644)
		_, err := ReadList(list)
		if !errors.Is(err, ErrList) || !strings.Contains(err.Error(), "books.txt:2") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want ErrList naming books.txt:2 and %q", c.line, err, c.says)
		}
	}
}

// A list is told by its content: text whose first location is a URL or an
// existing file; the .txt name only keeps a text list with a bad first
// line a list (so that ReadList names the line), and makes nothing else
// one.
func TestIsList(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mets.xml"), []byte(`<mets:mets xmlns:mets="http://www.loc.gov/METS/"/>`), 0o644)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for _, c := range []struct {
		name string
		body []byte
		want bool
		urls bool // ListsURLs: a list by URL, told from the bytes alone
	}{
		{"books.lst", []byte("# books\n\nhttps://example.org/iiif/b1/manifest.json\n"), true, true},
		{"books", []byte("\ufeffmets.xml\r\n"), true, false},
		{"BOOKS.TXT", []byte("https://example.org/a/mets.xml\n"), true, true},
		{"typo.txt", []byte("mets.xm\n"), true, false}, // ReadList names the line
		{"notes", []byte("mets.xm\n"), false, false},
		{"page.txt", png, false, false},
		{"record.txt", []byte("<record><title>x</title></record>\n"), false, false},
		{"empty.txt", []byte("# nothing\n\n"), false, false},
		{"json.txt", []byte("[\"https://example.org/a\"]\n"), false, false},
		// Longer than the head read, which ends inside a two-byte character.
		{"long.lst", []byte("https://example.org/ab\n# " + strings.Repeat("\u00e9", 40000) + "\n"), true, true},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.body, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := IsList(p); got != c.want {
			t.Errorf("IsList(%s holding %.60q) = %v, want %v", c.name, c.body, got, c.want)
		}
		if got := ListsURLs(c.body); got != c.urls {
			t.Errorf("ListsURLs(%.60q) = %v, want %v", c.body, got, c.urls)
		}
	}
	if IsList(filepath.Join(dir, "missing.txt")) {
		t.Error("IsList of a missing file = true")
	}
}
