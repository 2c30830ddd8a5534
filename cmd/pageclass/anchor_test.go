package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/pageclass/classify/classifytest"
)

// anchorMETS is the anchor METS of a multi-volume work pointing to hrefs.
func anchorMETS(hrefs ...string) string {
	var b strings.Builder
	b.WriteString(`<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink"><mets:structMap TYPE="LOGICAL"><mets:div TYPE="multivolume_work">`)
	for _, h := range hrefs {
		fmt.Fprintf(&b, `<mets:div TYPE="volume"><mets:mptr LOCTYPE="URL" xlink:href="%s"/></mets:div>`, h)
	}
	b.WriteString(`</mets:div></mets:structMap></mets:mets>`)
	return b.String()
}

// TestBookAnchorVolumes: the anchor METS of a multi-volume work is read as
// its volumes, each a book with its own FILE (it failed the run, naming
// them); in a folder holding the anchor and its volumes each volume is
// read once; a remote anchor's volume on another server is not read, and
// said.
func TestBookAnchorVolumes(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := classifytest.Pages(t, 1)
	work := filepath.Join(e.root, "work")
	for _, v := range []string{"vol1", "vol2"} {
		for i := 1; i <= 3; i++ {
			dst := filepath.Join(work, v, "image", fmt.Sprintf("%04d.png", i))
			mkdir(t, filepath.Dir(dst))
			if err := os.Symlink(pages[i], dst); err != nil {
				t.Fatal(err)
			}
		}
		rewrite(t, "kitodo-mets_with_pages.xml", filepath.Join(work, v, "mets.xml"), "https://example.com/image/", "image/")
	}
	write(t, filepath.Join(work, "work.xml"), anchorMETS("vol1/mets.xml", "vol2/mets.xml"))
	rows := func(t *testing.T) []string {
		t.Helper()
		var got []string
		r := readCSV(t, latest(t, e, "_v4.4_TOP-3.csv"))
		n := len(r[0])
		for _, row := range r[1:] {
			got = append(got, row[0]+"|"+row[1]+"|"+row[n-4])
		}
		return got
	}
	want := "vol1/mets|1|vol1/mets.xml,vol1/mets|2|vol1/mets.xml,vol1/mets|3|vol1/mets.xml,vol2/mets|1|vol2/mets.xml,vol2/mets|2|vol2/mets.xml,vol2/mets|3|vol2/mets.xml"
	// each run's tables alone in the results folder (runs of one second
	// are stamped s, s-2, ...: latest would not find the last)
	clear := func() {
		if err := os.RemoveAll(e.results); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"-f", filepath.Join(work, "work.xml")}, {"-d", work}} {
		clear()
		code, log := e.run(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, log)
		}
		if got := strings.Join(rows(t), ","); got != want {
			t.Errorf("%v: rows\n%s\nwant\n%s", args, got, want)
		}
		fails := readCSV(t, latest(t, e, "_"+FailuresTable))
		var failed []string
		for _, f := range fails[1:] {
			failed = append(failed, f[0])
		}
		// the fixture's fourth page has no image in each volume; no page twice
		if got := strings.Join(failed, ","); got != "vol1/mets.xml#PHYS_0004,vol2/mets.xml#PHYS_0004" {
			t.Errorf("%v: failures %s", args, got)
		}
	}

	// An anchor in a folder of its own beside its volumes (../vol1): each
	// volume named from the folder they share (both were "mets", and the
	// second volume's pages failed as taken).
	write(t, filepath.Join(work, "anchor", "mets.xml"), anchorMETS("../vol1/mets.xml", "../vol2/mets.xml"))
	clear()
	if code, log := e.run(t, "-f", filepath.Join(work, "anchor", "mets.xml")); code != exitOK {
		t.Fatalf("anchor beside its volumes: exit %d: %s", code, log)
	}
	// (SOURCE, outside the input folder, is the volume's whole path)
	if got := strings.ReplaceAll(strings.Join(rows(t), ","), work+string(filepath.Separator), ""); got != want {
		t.Errorf("anchor beside its volumes: rows\n%s\nwant\n%s", got, want)
	}

	// A remote anchor: its volume on its own server is read, one on
	// another server is a failed input naming why.
	srv := httptest.NewServer(http.FileServer(http.Dir(work)))
	defer srv.Close()
	write(t, filepath.Join(work, "remote.xml"), anchorMETS("vol1/mets.xml", "https://other.example/v/mets.xml"))
	clear()
	if code, log := e.run(t, "-f", srv.URL+"/remote.xml"); code != exitOK {
		t.Fatalf("remote anchor: exit %d (its pages are classified, the volume elsewhere failed): %s", code, log)
	}
	fails := readCSV(t, latest(t, e, "_"+FailuresTable))
	found := false
	for _, f := range fails[1:] {
		if f[0] == "https://other.example/v/mets.xml" {
			found = strings.Contains(f[1], "another server than its anchor")
		}
	}
	if !found {
		t.Errorf("the volume on another server is not failed with why: %v", fails)
	}

	// A list naming the remote anchor and its volume on another server,
	// as that failure advises: the volume is read as the list's book, and
	// not failed (it was both).
	other := httptest.NewServer(http.FileServer(http.Dir(work)))
	defer other.Close()
	write(t, filepath.Join(work, "remote2.xml"), anchorMETS("vol1/mets.xml", other.URL+"/vol2/mets.xml"))
	list := filepath.Join(e.root, "books.txt")
	write(t, list, srv.URL+"/remote2.xml\n"+other.URL+"/vol2/mets.xml\n")
	clear()
	if code, log := e.run(t, "-f", list); code != exitOK {
		t.Fatalf("list: exit %d: %s", code, log)
	}
	if got := len(rows(t)); got != 6 {
		t.Errorf("list: %d rows, want the 6 pages of both volumes", got)
	}
	for _, f := range readCSV(t, latest(t, e, "_"+FailuresTable))[1:] {
		if !strings.HasSuffix(f[0], "#PHYS_0004") {
			t.Errorf("list: failed %s: %s", f[0], f[1])
		}
	}
}
