package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/book/booktest"
	"archivekit/internal/cliflags"
	"archivekit/internal/ledger"
	"archivekit/internal/pageclass/classify/classifytest"
)

// bookSize is the input size of the test model v4.4: the long side of the
// derivatives asked for.
const bookSize = 32

// wantSize is the size parameter a page's image is asked for at: the
// smallest listed size whose long side is at least bookSize at level 0
// (full when none), else the long side (w, or ,h) at level 1, !w,h at
// level 2.
func wantSize(s *booktest.Server, i int) string {
	img, _ := s.Image(i)
	fw, fh := img.Bounds().Dx(), img.Bounds().Dy()
	switch s.Levels[i] {
	case 2:
		return fmt.Sprintf("!%d,%d", bookSize, bookSize)
	case 1:
		if fh > fw {
			return fmt.Sprintf(",%d", bookSize)
		}
		return fmt.Sprintf("%d,", bookSize)
	}
	for _, z := range booktest.Level0Sizes(fw, fh) {
		if max(z[0], z[1]) >= bookSize {
			if s.V3 {
				return fmt.Sprintf("%d,%d", z[0], z[1])
			}
			return fmt.Sprintf("%d,", z[0])
		}
	}
	return map[bool]string{true: "max", false: "full"}[s.V3]
}

// checkAsked checks that s was asked only what its levels allow, and each
// page's image at its wantSize.
func checkAsked(t *testing.T, s *booktest.Server) {
	t.Helper()
	_, denied, sizes, _ := s.Served()
	if len(denied) > 0 {
		t.Errorf("requests the levels do not allow: %v", denied)
	}
	for i := range s.Images {
		if got, want := sizes[i], wantSize(s, i); got != want {
			t.Errorf("page %d (level %d): asked for %q, want %q", i+1, s.Levels[i], got, want)
		}
	}
}

// A IIIF manifest given by its URL is classified page by page in canvas
// order: each page's image is fetched once, as the derivative its service's
// compliance level guarantees at the model's input size (the server refuses
// every other request, and none is sent), the rows keep the spec's columns
// with SOURCE and the canvas id and label after them, and the bytes per
// page are reported.
func TestBookIIIFLevels(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	images := classifytest.Pages(t, 1)
	for _, v3 := range []bool{false, true} {
		t.Run(map[bool]string{false: "v2", true: "v3"}[v3], func(t *testing.T) {
			s := booktest.New(t, images, 7, v3)
			results := filepath.Join(e.root, fmt.Sprint("v3-", v3))
			code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private", "--results", results)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, log)
			}
			reqLog, _, _, sent := s.Served()
			checkAsked(t, s)
			for path, n := range s.Requests() {
				if n != 1 {
					t.Errorf("%s requested %d times", path, n)
				}
			}
			if n := len(s.Requests()); n != len(s.Images)+1 {
				t.Errorf("%d paths requested, want the manifest and %d images: %v", n, len(s.Images), reqLog)
			}
			rows := readCSV(t, must(filepath.Glob(filepath.Join(results, "*_v4.4_TOP-3.csv")))[0])
			head := strings.Join(rows[0], ",")
			if !strings.HasPrefix(head, "FILE,PAGE,CLASS-1,CLASS-2,CLASS-3,SCORE-1,SCORE-2,SCORE-3,") || !strings.HasSuffix(head, ",SOURCE,BOOK_PAGE_ID,BOOK_ORDER,BOOK_LABEL") {
				t.Fatalf("header %s", head)
			}
			if len(rows) != len(s.Images)+1 {
				t.Fatalf("%d rows, want %d", len(rows)-1, len(s.Images))
			}
			n := len(rows[0])
			for i, row := range rows[1:] {
				want := []string{"manifest", fmt.Sprint(i + 1)}
				if row[0] != want[0] || row[1] != want[1] {
					t.Errorf("row %d: FILE %q PAGE %q, want %v", i+1, row[0], row[1], want)
				}
				if row[n-4] != s.ManifestURL() || row[n-3] != fmt.Sprintf("%s/iiif/book/canvas/p%d", s.URL, i+1) || row[n-1] != fmt.Sprintf("f. %d", i+1) {
					t.Errorf("row %d: SOURCE, BOOK_PAGE_ID, BOOK_LABEL %q", i+1, row[n-4:])
				}
			}
			total := 0
			for _, b := range sent {
				total += b
			}
			t.Logf("%d bytes for %d pages at %d px", total, len(s.Images), bookSize)
			e2 := *e
			e2.results = results
			fetched, _ := readParadata(t, &e2).Config["book_fetch"].(map[string]any)
			if per, _ := fetched["bytes_per_page"].(float64); int(per) != total/len(s.Images) || per > 60000 {
				t.Errorf("bytes per page reported %v, the server sent %d for %d pages", fetched, total, len(s.Images))
			}
		})
	}
}

// A manifest that says only each image service's id (as many do): each
// page's service's info.json is read once, and the image asked for within
// the level and sizes it gives (the full image was fetched from a level 0
// server, and a server refusing to scale up failed small pages).
func TestBookSparseServices(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	s := booktest.New(t, classifytest.Pages(t, 1), 6, true)
	s.Sparse = true
	results := filepath.Join(e.root, "sparse")
	if code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private", "--results", results); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	checkAsked(t, s)
	for i := range s.Images {
		if n := s.Requests()[fmt.Sprintf("/iiif/img/%d/info.json", i)]; n != 1 {
			t.Errorf("page %d: info.json read %d times, want once", i+1, n)
		}
	}
	rows := readCSV(t, must(filepath.Glob(filepath.Join(results, "*_v4.4_TOP-3.csv")))[0])
	if len(rows) != len(s.Images)+1 {
		t.Errorf("%d rows, want %d", len(rows)-1, len(s.Images))
	}
}

// A book's links to another host reach loopback or private addresses only
// with --fetch-private: without it the manifest given is read, no image is
// requested, and every page is recorded as failed with the reason and the
// flag. Links on the host of the URL given (the user named it, as with
// translate) are fetched without it (before: refused too).
func TestBookLinksToPrivateRefused(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	s := booktest.New(t, classifytest.Pages(t, 1), 3, true)
	// the same manifest served from another host: its links lead to s
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(s.ManifestURL())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		io.Copy(w, resp.Body)
	}))
	defer other.Close()
	code, log := e.run(t, "-f", other.URL+"/manifest.json")
	if code == exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if reqLog, _, _, _ := s.Served(); strings.Join(reqLog, " ") != "/iiif/book/manifest.json" {
		t.Errorf("requests %v, want the manifest only", reqLog)
	}
	fails := readCSV(t, e.output(t, "_"+FailuresTable))
	if len(fails) != 4 || !strings.Contains(fails[1][1], "private") {
		t.Errorf("failures %v", fails)
	}
	// The reason says how to allow them (before, it named the address
	// rule only).
	if len(fails) > 1 && !strings.Contains(fails[1][1], "--fetch-private") {
		t.Errorf("the refusal does not say that --fetch-private allows it: %q", fails[1][1])
	}
	results := filepath.Join(e.root, "same-host")
	if code, log := e.run(t, "-f", s.ManifestURL(), "--results", results); code != exitOK {
		t.Errorf("links on the host of the URL given: exit %d: %s", code, log)
	}
}

// A 200-page book killed (SIGKILL) after 60 pages and resumed: no page's
// image is requested twice from the server, none is classified twice (the
// ledger holds each page once), and the tables equal one clean run's.
func TestBookKillAndResume(t *testing.T) {
	if os.Getenv("PAGECLASS_TEST_BOOK_CHILD") != "" {
		itemHook = func(n int) {
			if n == 60 {
				fetchLock.Lock() // no fetch after this one, none half done
				fmt.Println("item", n)
				select {} // wait here to be killed
			}
		}
		os.Exit(run(context.Background(), strings.Split(os.Getenv("PAGECLASS_TEST_BOOK_CHILD"), "\x1f"), os.Stderr, os.Stderr))
	}
	const pages = 200
	e := newEnv(t, map[string]string{"SETUP.batch": "8"})
	e.model(t, "v4.4")
	images := classifytest.Pages(t, 2)
	s := booktest.New(t, images, pages, false)
	whole := filepath.Join(e.root, "whole")
	if code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private", "--results", whole); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	s.Reset()
	stderr := killAt(t, "TestBookKillAndResume", "PAGECLASS_TEST_BOOK_CHILD", []string{"--config", e.cfg, "-f", s.ManifestURL(), "--fetch-private"}, "item 60")
	before := s.Requests()
	fetchedBefore := len(before) - 1
	if fetchedBefore < 60 || fetchedBefore >= pages {
		t.Fatalf("%d pages fetched before the kill: %s", fetchedBefore, stderr)
	}
	t.Logf("%d pages fetched before the kill, 60 classified", fetchedBefore)
	code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private", "--resume")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	for path, n := range s.Requests() {
		if want := map[bool]int{true: 2, false: 1}[path == "/iiif/book/manifest.json"]; n != want {
			t.Errorf("%s requested %d times, want %d", path, n, want)
		}
	}
	if _, denied, _, _ := s.Served(); len(s.Requests()) != pages+1 || len(denied) > 0 {
		t.Errorf("%d paths requested (%d denied), want the manifest and %d images", len(s.Requests()), len(denied), pages)
	}
	// The pages fetched and not classified before the kill are taken from
	// the images the killed run kept, not fetched again.
	if want := fmt.Sprintf(`"fetched_before":%d`, fetchedBefore-60); !strings.Contains(log, want) {
		t.Errorf("the resumed run's log does not say %s (%d fetched before the kill)", want, fetchedBefore)
	}
	if n := toClassify(t, log); n != pages-60 {
		t.Errorf("resume classified %d pages, want %d", n, pages-60)
	}
	files, _ := filepath.Glob(filepath.Join(e.results, LedgerFolder, "pageclass_*", "*.jsonl"))
	seen := map[string]int{}
	for _, f := range files {
		es, err := ledger.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range es {
			seen[en.Item]++
		}
	}
	classified, fetched := 0, 0
	for item, n := range seen {
		if n != 1 {
			t.Errorf("ledger: %s recorded %d times", item, n)
		}
		if strings.HasPrefix(item, "fetched ") {
			fetched++
		} else {
			classified++
		}
	}
	if classified != pages || fetched != pages {
		t.Errorf("ledger: %d pages classified, %d fetched, want %d each", classified, fetched, pages)
	}
	if got, want := tableRows(t, e.results, "_v4.4_TOP-3.csv"), tableRows(t, whole, "_v4.4_TOP-3.csv"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table after kill and resume differs from the clean run's")
	}
	if got, want := tableRows(t, e.results, "_v4.4_REVIEW.csv"), tableRows(t, whole, "_v4.4_REVIEW.csv"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("review table after kill and resume differs from the clean run's")
	}
	if kept, _ := filepath.Glob(filepath.Join(e.results, LedgerFolder, "pageclass_*", "fetched", "*")); len(kept) != 0 {
		t.Errorf("%d fetched images kept after every page was classified", len(kept))
	}
}

// rewrite copies a METS file of internal/book/testdata to dst with its
// image locations replaced (old, new pairs).
func rewrite(t *testing.T, name, dst string, oldnew ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "book", "testdata", "mets", name))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dst, strings.NewReplacer(oldnew...).Replace(string(b)))
}

// A METS file written by Goobi (ULB Sachsen-Anhalt; testdata of
// internal/book) whose images are files on the producer's disk, here
// rewritten to URLs of a loopback server: its 52 pages less the three that
// its logical structure calls cover, left out by --book-skip-types before
// anything is fetched, are classified in physical order, each
// image fetched once (a file, not a IIIF service: as it is), and the rows
// carry the METS div ID, ORDER and ORDERLABEL.
func TestBookMETSGoobi(t *testing.T) {
	e, s, mets := goobiBook(t)
	code, log := e.run(t, "-f", mets, "--book-skip-types", "cover")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	requestedOnce(t, s, 49, func(p string) bool {
		return strings.HasPrefix(p, "/plain/flb000645_") && p != "/plain/flb000645_0001.jpg"
	})
	rows := readCSV(t, e.output(t, "_v4.4_TOP-3.csv"))
	if len(rows) != 50 {
		t.Fatalf("%d rows, want 49", len(rows)-1)
	}
	n := len(rows[0])
	want := map[string][]string{ // PAGE: SOURCE, ID, ORDER, ORDERLABEL
		"1": {"74241.xml", "PHYS_0002", "2"},
		"5": {"74241.xml", "PHYS_0010", "6", "[1v]"},
		"6": {"74241.xml", "PHYS_0011", "7", "2"},
	}
	for _, row := range rows[1:] {
		if row[0] != "74241" {
			t.Errorf("FILE %q, want the book's stem", row[0])
		}
		if w, ok := want[row[1]]; ok && strings.Join(row[n-4:n-4+len(w)], "|") != strings.Join(w, "|") {
			t.Errorf("PAGE %s: %q, want %q", row[1], row[n-4:], w)
		}
	}
}

// A folder holding a book (a Kitodo METS file of internal/book/testdata,
// its images rewritten to files beside it, one of them missing), a file
// that looks like METS and is not a book, and a loose page: the loose page
// and the book's pages are classified, the book's images only as its
// pages; the missing image and the broken book are recorded in the
// failures table with what was wrong, and the run succeeds.
func TestBookFolder(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := classifytest.Pages(t, 1)
	for i := 1; i <= 3; i++ {
		dst := filepath.Join(e.in, "kitodo", "image", fmt.Sprintf("%04d.png", i))
		mkdir(t, filepath.Dir(dst))
		if err := os.Symlink(pages[i], dst); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(pages[0], filepath.Join(e.in, "loose.png")); err != nil {
		t.Fatal(err)
	}
	rewrite(t, "kitodo-mets_with_pages.xml", filepath.Join(e.in, "kitodo", "mets.xml"), "https://example.com/image/", "image/")
	write(t, filepath.Join(e.in, "broken.xml"), `<mets:mets xmlns:mets="http://www.loc.gov/METS/"><mets:fileSec/></mets:mets>`)
	write(t, filepath.Join(e.in, "notes.json"), `{"note": "not a book"}`)
	code, log := e.run(t, "-d", e.in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	rows := readCSV(t, e.output(t, "_v4.4_TOP-3.csv"))
	var got []string
	n := len(rows[0])
	for _, row := range rows[1:] {
		got = append(got, strings.Join([]string{row[0], row[1], row[n-4], row[n-3], row[n-2]}, "|"))
	}
	want := []string{"kitodo/mets|1|kitodo/mets.xml|PHYS_0001|1", "kitodo/mets|2|kitodo/mets.xml|PHYS_0002|2",
		"kitodo/mets|3|kitodo/mets.xml|PHYS_0003|3", "loose||loose.png||"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	fails := readCSV(t, e.output(t, "_"+FailuresTable))
	var failed []string
	for _, f := range fails[1:] {
		failed = append(failed, f[0])
		switch f[0] {
		case "broken.xml":
			if !strings.Contains(f[1], "book not read") || !strings.Contains(f[1], "broken.xml") {
				t.Errorf("broken book: %q", f[1])
			}
		case "kitodo/mets.xml#PHYS_0004":
			if !strings.Contains(f[1], "0004.png") {
				t.Errorf("missing image: %q", f[1])
			}
		}
	}
	if strings.Join(failed, ",") != "broken.xml,kitodo/mets.xml#PHYS_0004" {
		t.Errorf("failures %v", fails)
	}
}

// A folder of a METS file beside its TIFF masters, run with the default
// -ff png: the TIFFs are classified as the book's pages and are not said
// to be left out (the run warned "readable files left out: not collected:
// 3 .tif", and the summary counted them left).
func TestBookFolderTIFFNotLeft(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	tif := readFile(t, filepath.Join("..", "..", "internal", "pageclass", "imageio", "testdata", "page.tif"))
	for i := 1; i <= 3; i++ {
		write(t, filepath.Join(e.in, fmt.Sprintf("%04d.tif", i)), tif)
	}
	rewrite(t, "kitodo-mets_with_pages.xml", filepath.Join(e.in, "mets.xml"), "https://example.com/image/", "", ".png", ".tif")
	code, log := e.run(t, "-d", e.in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if rows := readCSV(t, e.output(t, "_v4.4_TOP-3.csv")); len(rows) != 4 {
		t.Errorf("%d rows, want the book's 3 pages", len(rows)-1)
	}
	if strings.Contains(log, "files left out") {
		t.Errorf("the book's images are said left out:\n%s", log)
	}
}

// A folder holding an OCR-D workspace: its METS lists each page's image
// in OCR-D-IMG and the binarised and cropped images derived from it in
// other fileGrps. The book's pages are classified once each; the derived
// images are the book's (they were classified as pages of their own: 73
// rows beside the book's 2), the image group chosen is named in the log
// and the run metadata, and a page without an image fails with its label.
func TestBookFolderOCRDWorkspace(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := classifytest.Pages(t, 1)
	var files, divs strings.Builder
	for _, grp := range []string{"OCR-D-IMG", "OCR-D-IMG-BIN", "OCR-D-IMG-CROP"} {
		fmt.Fprintf(&files, `<mets:fileGrp USE="%s">`, grp)
		for i := 1; i <= 2; i++ {
			name := fmt.Sprintf("%s/%s_%04d.png", grp, grp, i)
			mkdir(t, filepath.Join(e.in, grp))
			if err := os.Symlink(pages[i], filepath.Join(e.in, name)); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&files, `<mets:file ID="%s_%04d" MIMETYPE="image/png"><mets:FLocat LOCTYPE="OTHER" OTHERLOCTYPE="FILE" xlink:href="%s"/></mets:file>`, grp, i, name)
		}
		files.WriteString(`</mets:fileGrp>`)
	}
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(&divs, `<mets:div TYPE="page" ID="PHYS_%04d" ORDER="%d"><mets:fptr FILEID="OCR-D-IMG_%04d"/><mets:fptr FILEID="OCR-D-IMG-BIN_%04d"/><mets:fptr FILEID="OCR-D-IMG-CROP_%04d"/></mets:div>`, i, i, i, i, i)
	}
	divs.WriteString(`<mets:div TYPE="page" ID="PHYS_0003" ORDER="3" ORDERLABEL="[Einband]"><mets:fptr FILEID="nothing"/></mets:div>`)
	write(t, filepath.Join(e.in, "mets.xml"), `<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink"><mets:fileSec>`+files.String()+
		`</mets:fileSec><mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence">`+divs.String()+`</mets:div></mets:structMap></mets:mets>`)
	code, log := e.run(t, "-d", e.in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	rows := readCSV(t, e.output(t, "_v4.4_TOP-3.csv"))
	var got []string
	for _, row := range rows[1:] {
		got = append(got, row[0]+"|"+row[1])
	}
	if strings.Join(got, " ") != "mets|1 mets|2" {
		t.Errorf("rows %v, want the book's two pages only", got)
	}
	if !strings.Contains(log, `"image_groups":{"mets.xml":"OCR-D-IMG"}`) {
		t.Errorf("the log does not name the image group:\n%s", log)
	}
	if groups, _ := readParadata(t, e).Config["book_image_groups"].(map[string]any); groups["mets.xml"] != "OCR-D-IMG" {
		t.Errorf("run metadata book_image_groups %v", groups)
	}
	fails := readCSV(t, e.output(t, "_"+FailuresTable))
	if len(fails) != 2 || !strings.Contains(fails[1][1], `labelled "[Einband]"`) {
		t.Errorf("failures %v, want PHYS_0003 with its label", fails)
	}
}

// A .txt list given to -f (issue 28): two IIIF manifests by URL, a local
// METS file by its path relative to the list (Kitodo, its images beside
// it, one missing) and a URL that answers 404: the pages of the three
// books are classified, each URL book's FILE its
// host and path (two manifests both named manifest.json stay apart); the
// book not read and the missing image are failures, and the run succeeds.
// A list line naming neither a URL nor a book is a usage error.
func TestBookList(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := classifytest.Pages(t, 1)
	s1 := booktest.New(t, pages, 3, true)
	s2 := booktest.New(t, pages, 2, false)
	lists := filepath.Join(e.root, "lists")
	for i := 1; i <= 3; i++ {
		dst := filepath.Join(lists, "kitodo", "image", fmt.Sprintf("%04d.png", i))
		mkdir(t, filepath.Dir(dst))
		if err := os.Symlink(pages[i], dst); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(t, "kitodo-mets_with_pages.xml", filepath.Join(lists, "kitodo", "mets.xml"), "https://example.com/image/", "image/")
	list := filepath.Join(lists, "books.txt")
	gone := s1.URL + "/iiif/gone/manifest.json"
	write(t, list, "# books\n"+s1.ManifestURL()+"\n\n"+s2.ManifestURL()+"\nkitodo/mets.xml\n"+gone+"\n")
	code, log := e.run(t, "-f", list, "--fetch-private")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	rows := readCSV(t, e.output(t, "_v4.4_TOP-3.csv"))
	n := len(rows[0])
	var got []string
	for _, row := range rows[1:] {
		got = append(got, strings.Join([]string{row[0], row[1], row[n-4], row[n-3]}, "|"))
	}
	stem := func(s *booktest.Server) string { return strings.TrimPrefix(s.URL, "http://") + "/iiif/book/manifest" }
	var want []string
	for i := 1; i <= 3; i++ {
		want = append(want, fmt.Sprintf("%s|%d|%s|%s/iiif/book/canvas/p%d", stem(s1), i, s1.ManifestURL(), s1.URL, i))
	}
	for i := 1; i <= 2; i++ {
		want = append(want, fmt.Sprintf("%s|%d|%s|%s/iiif/book/canvas/p%d", stem(s2), i, s2.ManifestURL(), s2.URL, i))
	}
	for i := 1; i <= 3; i++ {
		want = append(want, fmt.Sprintf("kitodo/mets|%d|kitodo/mets.xml|PHYS_%04d", i, i))
	}
	slices.Sort(want) // the table's rows are in key order
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	failed, reasons := failureRows(t, e)
	if strings.Join(failed, ",") != gone+",kitodo/mets.xml#PHYS_0004" || !strings.Contains(reasons[gone], "book not read") {
		t.Errorf("failures %v: %v", failed, reasons)
	}
	// The book not read is logged at ERROR, as a page that failed (it was
	// WARN).
	if !strings.Contains(log, `"level":"ERROR","msg":"not classified","item":"`+gone) {
		t.Errorf("the book not read is not an ERROR record:\n%s", log)
	}
	// The warning of the page whose image is missing names its position in
	// the book and its ID (before, "page":0).
	if !regexp.MustCompile(`"level":"ERROR","msg":"page skipped","file":"[^"]*kitodo/mets.xml#PHYS_0004","page":4,"page_id":"PHYS_0004"`).MatchString(log) ||
		strings.Contains(log, `"page":0`) {
		t.Errorf("the missing image's warning does not give its page 4 and ID PHYS_0004:\n%s", log)
	}

	write(t, list, s1.ManifestURL()+"\nkitodo/image/0001.png\n")
	if code, log := e.run(t, "-f", list, "--fetch-private"); code != exitUsage || !strings.Contains(log, "books.txt:2") {
		t.Errorf("a list naming an image: exit %d, want %d naming books.txt:2: %s", code, exitUsage, log)
	}

	// Given from its own folder, a list's book not read is named by its
	// URL as written (it was "http:/host/...", cleaned as a path), and a
	// list whose only book is not read says which list and why.
	t.Chdir(lists)
	if err := os.RemoveAll(e.results); err != nil {
		t.Fatal(err)
	}
	write(t, list, s2.ManifestURL()+"\n"+gone+"\n")
	if code, log := e.run(t, "-f", "books.txt", "--fetch-private"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if failed, _ := failureRows(t, e); len(failed) != 1 || failed[0] != gone {
		t.Errorf("failures %q, want %s", failed, gone)
	}
	// A book listed twice is read once, said so (each of its pages failed
	// as "page ID given twice in the book").
	if err := os.RemoveAll(e.results); err != nil {
		t.Fatal(err)
	}
	write(t, list, s2.ManifestURL()+"\n"+s2.ManifestURL()+"\n")
	if code, log := e.run(t, "-f", "books.txt", "--fetch-private"); code != exitOK || !strings.Contains(log, "book listed twice: read once") {
		t.Errorf("a book listed twice: exit %d: %s", code, log)
	}
	if failed, _ := failureRows(t, e); len(failed) != 0 {
		t.Errorf("a book listed twice: failures %q", failed)
	}
	// A book its server fails in passing (503 after the retries) is left
	// to do: exit 75 with the others classified, or alone, and given by
	// itself (the run said complete, or no input, exit 2).
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	for _, lines := range []string{s2.ManifestURL() + "\n" + busy.URL + "/manifest.json\n", busy.URL + "/manifest.json\n"} {
		os.RemoveAll(e.results)
		write(t, list, lines)
		if code, log := e.run(t, "-f", "books.txt", "--fetch-private"); code != cliflags.ExitIncomplete || !strings.Contains(log, "503") {
			t.Errorf("a list with a book its server failed in passing (%q): exit %d, want %d: %s", lines, code, cliflags.ExitIncomplete, log)
		}
	}
	if code, log := e.run(t, "-f", busy.URL+"/manifest.json", "--fetch-private"); code != cliflags.ExitIncomplete || !strings.Contains(log, "503") {
		t.Errorf("a book its server failed in passing: exit %d, want %d: %s", code, cliflags.ExitIncomplete, log)
	}
	write(t, list, gone+"\n")
	if code, log := e.run(t, "-f", "books.txt", "--fetch-private"); code != exitNoInput ||
		!strings.Contains(log, "no page to classify in books.txt: 1 books, none with a page image read ("+gone+": book not read: ") {
		t.Errorf("a list of a book not read: exit %d, want %d naming books.txt and %s: %s", code, exitNoInput, gone, log)
	}
}

// failureRows are the items of the run's failures table, in order, and
// their reasons.
func failureRows(t *testing.T, e *env) (items []string, reasons map[string]string) {
	t.Helper()
	reasons = map[string]string{}
	for _, f := range readCSV(t, e.output(t, "_"+FailuresTable))[1:] {
		items = append(items, f[0])
		reasons[f[0]] = f[1]
	}
	return items, reasons
}

// A book page's ORDERLABEL is its page label (issue 28), where a PDF
// page's label goes: the PAGE_LABEL column (before SOURCE) and the pages'
// `page` in the document record, with page_index its position; also in a
// resumed run, which takes the pages from the ledger. The Goobi METS of
// TestBookMETSGoobi, six pages whose ORDERLABELs are 1, [1v], 2, [2v], 3,
// [3v].
func TestBookPageLabels(t *testing.T) {
	e, _, mets := goobiBook(t)
	labels := []string{"1", "[1v]", "2", "[2v]", "3", "[3v]"}
	records := filepath.Join(e.root, "records")
	for _, resume := range []bool{false, true} {
		args := []string{"-f", mets, "--book-pages", "PHYS_0005..PHYS_0014", "--document-json-out-dir", records}
		if resume {
			args = append(args, "--resume")
		}
		if resume {
			// The first run's tables go (the ledger stays), so the one
			// left is the resumed run's: two runs of one second are
			// STAMP_ and STAMP-2_, which do not sort by time.
			old, _ := filepath.Glob(filepath.Join(e.results, "*.csv"))
			for _, f := range old {
				os.Remove(f)
			}
		}
		code, log := e.run(t, args...)
		if code != exitOK {
			t.Fatalf("resume %v: exit %d: %s", resume, code, log)
		}
		rows := readCSV(t, e.output(t, "_v4.4_TOP-3.csv"))
		n := len(rows[0])
		if strings.Join(rows[0][n-5:], ",") != "PAGE_LABEL,SOURCE,BOOK_PAGE_ID,BOOK_ORDER,BOOK_LABEL" {
			t.Fatalf("header %q", rows[0])
		}
		var got []string
		for _, row := range rows[1:] {
			got = append(got, row[n-5])
			if row[n-5] != row[n-1] {
				t.Errorf("PAGE %s: PAGE_LABEL %q, BOOK_LABEL %q", row[1], row[n-5], row[n-1])
			}
		}
		if !slices.Equal(got, labels) {
			t.Errorf("resume %v: PAGE_LABEL %q, want %q", resume, got, labels)
		}
		var rec struct {
			Pages []struct {
				Page  string `json:"page"`
				Index int    `json:"page_index"`
			} `json:"pages"`
		}
		if err := json.Unmarshal(must(os.ReadFile(filepath.Join(records, "74241.document.json"))), &rec); err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for i, p := range rec.Pages {
			got = append(got, p.Page)
			if p.Index != i+1 {
				t.Errorf("record page %q: page_index %d, want %d", p.Page, p.Index, i+1)
			}
		}
		if !slices.Equal(got, labels) {
			t.Errorf("resume %v: the record's pages %q, want %q", resume, got, labels)
		}
	}
}

// goobiBook is a run's environment with the test model and the Goobi METS
// of internal/book/testdata (books/74241.xml) whose images are on the
// loopback server s.
func goobiBook(t *testing.T) (e *env, s *booktest.Server, mets string) {
	t.Helper()
	e = newEnv(t, nil)
	e.model(t, "v4.4")
	s = booktest.New(t, classifytest.Pages(t, 1), 1, false)
	mets = filepath.Join(e.root, "books", "74241.xml")
	rewrite(t, "goobi-ulb-74241.xml", mets, "file:///opt/digiverso/viewer/media/74241/", s.URL+"/plain/")
	return e, s, mets
}

// A book's page images are fetched --fetch-workers at once (issue 28), so
// that a slow server does not pace the run, and no more: the server below
// holds each image request until three are in flight (or 5 s pass), and
// sees three at once at most; the rows stay in page order and each image
// is requested once.
func TestBookFetchWorkers(t *testing.T) {
	const workers = 3
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	s := booktest.New(t, classifytest.Pages(t, 1), 1, false)
	gate := booktest.NewGate(workers)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer gate.Enter()()
		s.ServeHTTP(w, r)
	}))
	defer slow.Close()
	mets := filepath.Join(e.root, "books", "74241.xml")
	rewrite(t, "goobi-ulb-74241.xml", mets, "file:///opt/digiverso/viewer/media/74241/", slow.URL+"/plain/")
	code, log := e.run(t, "-f", mets, "--book-pages", "PHYS_0005..PHYS_0018", "--fetch-workers", fmt.Sprint(workers))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if most := gate.Most(); most != workers {
		t.Errorf("%d image requests in flight at most, want %d", most, workers)
	}
	requestedOnce(t, s, 10, func(string) bool { return true })
	rows := readCSV(t, e.output(t, "_v4.4_TOP-3.csv"))
	n := len(rows[0])
	var got []string
	for _, row := range rows[1:] {
		got = append(got, row[1]+":"+row[n-2])
	}
	want := []string{"1:5", "2:6", "3:7", "4:8", "5:9", "6:10", "7:11", "8:12", "9:13", "10:14"}
	if !slices.Equal(got, want) {
		t.Errorf("PAGE:BOOK_ORDER %q, want %q", got, want)
	}
	if code, log := e.run(t, "-f", mets, "--fetch-workers", "0"); code != exitUsage || !strings.Contains(log, "--fetch-workers") {
		t.Errorf("--fetch-workers 0: exit %d: %s", code, log)
	}
}

// requestedOnce checks that s served want paths, each once and each one
// that ok accepts.
func requestedOnce(t *testing.T, s *booktest.Server, want int, ok func(path string) bool) {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) != want {
		t.Errorf("%d images requested, want %d: %v", len(reqs), want, reqs)
	}
	for p, n := range reqs {
		if n != 1 || !ok(p) {
			t.Errorf("%s requested %d times", p, n)
		}
	}
}

// A book page whose image is not a readable image (a file truncated or of
// another format, locally and behind a URL) is a failure whose reason
// names the image file or URL as well as the page, so the user knows which
// file to fix (before, only "<book>#PHYS_0002: cannot read header: ..." or
// "unsupported image format", naming no file).
func TestBookBrokenImageNamed(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := classifytest.Pages(t, 1)
	dir := filepath.Join(e.root, "kitodo")
	mkdir(t, filepath.Join(dir, "image"))
	for i := 1; i <= 4; i++ {
		dst := filepath.Join(dir, "image", fmt.Sprintf("%04d.png", i))
		if i == 2 {
			write(t, dst, "\x89PNG\r\n\x1a\n truncated")
			continue
		}
		if err := os.Symlink(pages[i], dst); err != nil {
			t.Fatal(err)
		}
	}
	local := filepath.Join(dir, "mets.xml")
	rewrite(t, "kitodo-mets_with_pages.xml", local, "https://example.com/image/", "image/")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	rewrite(t, "kitodo-mets_with_pages.xml", filepath.Join(dir, "remote.xml"), "https://example.com/image/", srv.URL+"/image/")
	for _, c := range []struct{ book, image string }{
		{local, filepath.Join(dir, "image", "0002.png")},
		{srv.URL + "/remote.xml", srv.URL + "/image/0002.png"},
	} {
		results := filepath.Join(e.root, fmt.Sprint("results-", strings.HasPrefix(c.book, "http")))
		code, log := e.run(t, "-f", c.book, "--fetch-private", "--results", results)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.book, code, log)
		}
		e2 := *e
		e2.results = results
		fails := readCSV(t, e2.output(t, "_"+FailuresTable))
		if len(fails) != 2 || !strings.HasSuffix(fails[1][0], "#PHYS_0002") || !strings.Contains(fails[1][1], "PHYS_0002") || !strings.Contains(fails[1][1], c.image) {
			t.Errorf("%s: failures %q, want PHYS_0002's naming the page and %s", c.book, fails, c.image)
		}
	}
}

// A book given by URL whose every page's image is at an absolute file://
// location (refused in a remote document) fails with an error that says
// why (the reader's problems), not only that no page has an image.
func TestBookNoImageSaysWhy(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	dir := filepath.Join(e.root, "served")
	rewrite(t, "kitodo-mets_with_pages.xml", filepath.Join(dir, "mets.xml"), "https://example.com/image/", "file:///scans/image/")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	code, log := e.run(t, "-f", srv.URL+"/mets.xml")
	if code == exitOK || !strings.Contains(log, "no page has an image to classify") ||
		!strings.Contains(log, "file:///scans/image/0001.png: a file:// location in a remote document") {
		t.Errorf("exit %d; the error should say why no page has an image: %s", code, log)
	}
}

// latest is the newest results file ending with suffix (the stamps sort by
// time): a resumed run writes its own tables beside the earlier run's.
func latest(t *testing.T, e *env, suffix string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(e.results, "*"+suffix))
	if len(m) == 0 {
		t.Fatalf("no results file ends with %s", suffix)
	}
	slices.Sort(m)
	return m[len(m)-1]
}

// A page whose image answers 404 is recorded failed in the ledger under
// its URL (trial of 2026-11-27; before, it was not recorded and every
// --resume requested it again): a --resume lists it failed again without
// requesting it, --retry-failed requests it again.
func TestBookImageGoneRecorded(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	s := booktest.New(t, classifytest.Pages(t, 1), 3, true)
	s.Gone(1)
	if code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	failedRow := func(run string) {
		t.Helper()
		rows := readCSV(t, latest(t, e, "_"+FailuresTable))
		if len(rows) != 2 || !strings.HasSuffix(rows[1][0], "/iiif/book/canvas/p2") || !strings.Contains(rows[1][1], "404") {
			t.Errorf("%s: failures %v, want page p2 with its 404", run, rows)
		}
	}
	failedRow("first run")
	for path, n := range s.Requests() {
		if n != 1 {
			t.Errorf("first run: %s requested %d times, want once", path, n)
		}
	}
	s.Reset()
	if code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private", "--resume"); code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, log)
	}
	if req := s.Requests(); len(req) != 1 || req["/iiif/book/manifest.json"] != 1 {
		t.Errorf("resume requested %v, want the manifest only (the 404 page is recorded failed)", req)
	}
	failedRow("resume")
	s.Reset()
	if code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private", "--resume", "--retry-failed"); code != exitOK {
		t.Fatalf("retry-failed: exit %d: %s", code, log)
	}
	if req := s.Requests(); len(req) != 2 || req["/iiif/book/manifest.json"] != 1 {
		t.Errorf("--retry-failed requested %v, want the manifest and the 404 image", req)
	}
	failedRow("retry-failed")
}

// Canvases that share an image: a fresh run reports none of them fetched
// before (trial of 2026-11-27; before, the pages whose image another page
// of the run had just fetched were counted as fetched by an earlier run).
func TestBookSharedImageNotFetchedBefore(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	s := booktest.New(t, classifytest.Pages(t, 2), 2, true)
	var files, divs strings.Builder
	for i := 1; i <= 8; i++ {
		img := map[bool]string{true: "p1.png", false: "p2.png"}[i < 8]
		fmt.Fprintf(&files, `<mets:file ID="IMG_%d" MIMETYPE="image/png"><mets:FLocat LOCTYPE="URL" xlink:href="%s/plain/%s"/></mets:file>`+"\n", i, s.URL, img)
		fmt.Fprintf(&divs, `<mets:div ID="PHYS_%d" ORDER="%d" TYPE="page"><mets:fptr FILEID="IMG_%d"/></mets:div>`+"\n", i, i, i)
	}
	mets := filepath.Join(e.root, "shared", "mets.xml")
	mkdir(t, filepath.Dir(mets))
	write(t, mets, `<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
<mets:fileSec><mets:fileGrp USE="DEFAULT">
`+files.String()+`</mets:fileGrp></mets:fileSec>
<mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence">
`+divs.String()+`</mets:div></mets:structMap>
</mets:mets>
`)
	code, log := e.run(t, "-f", mets, "--fetch-private")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if rows := readCSV(t, e.output(t, "_v4.4_TOP-3.csv")); len(rows) != 9 {
		t.Fatalf("%d rows, want 8", len(rows)-1)
	}
	fetched, _ := readParadata(t, e).Config["book_fetch"].(map[string]any)
	if n, ok := fetched["fetched_before"].(float64); !ok || n != 0 {
		t.Errorf("book_fetch %v: fetched_before of a fresh run, want 0", fetched)
	}
	if n, _ := fetched["pages_fetched"].(float64); n < 2 {
		t.Errorf("book_fetch %v: want both images fetched", fetched)
	}
	// Each image is counted once however many pages show it: the images'
	// bytes are those the run fetched (they were counted for every page
	// whose image the fetcher gave, 516,241 of 245,239 bytes fetched).
	if n, _ := fetched["pages_fetched"].(float64); n != 2 || fetched["image_bytes"].(float64) > fetched["bytes"].(float64) {
		t.Errorf("book_fetch %v: want 2 images counted, image_bytes within bytes", fetched)
	}
}

// TestBookOutMETSWarnsFirst: --book-out with a METS book (it writes IIIF
// annotation pages) says that none will be written for it before the first
// page is classified, not once the run has classified every page, and
// writes nothing into the folder; the pages are classified.
func TestBookOutMETSWarnsFirst(t *testing.T) {
	e, _, mets := goobiBook(t)
	dir := filepath.Join(t.TempDir(), "bookout")
	code, log := e.run(t, "-f", mets, "--book-skip-types", "cover", "--book-out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	warned := strings.Index(log, "this book is not a IIIF manifest or collection")
	classified := strings.Index(log, `"pages classified"`)
	if warned < 0 || classified < 0 || warned > classified {
		t.Errorf("the warning at %d, the pages classified at %d: want the warning first:\n%s", warned, classified, log)
	}
	if strings.Count(log, "not a IIIF manifest or collection") != 1 {
		t.Errorf("the warning given %d times, want once", strings.Count(log, "not a IIIF manifest or collection"))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("--book-out wrote %d files for a METS book", len(entries))
	}
	if rows := readCSV(t, e.output(t, "_v4.4_TOP-3.csv")); len(rows) != 50 {
		t.Errorf("%d rows, want 49 pages", len(rows)-1)
	}
}

// -f with the URL of a page image (not a book) is refused as no input,
// saying it is a page image and how to classify it (before: "neither XML
// nor JSON (it starts with \x89PNG...)").
func TestFileURLOfAPageImage(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	png := []byte(readFile(t, classifytest.Pages(t, 1)[0]))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(png) }))
	defer srv.Close()
	u := srv.URL + "/scans/0001.png"
	code, log := e.run(t, "-f", u, "--fetch-private")
	if code != exitNoInput || !strings.Contains(log, "it is a page image or a PDF (image/png); -f takes a page image or PDF as a local file: download it (curl -O "+u+")") {
		t.Errorf("exit %d, want %d saying it is a page image: %s", code, exitNoInput, log)
	}
}

// TestBookFlagsWithoutBook: --book-pages and --image-group given to a run
// none of whose inputs is a book are a usage error naming the flag, before
// any page is classified (a folder of images given --book-pages was
// classified whole without a word).
func TestBookFlagsWithoutBook(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := classifytest.Pages(t, 1)
	mkdir(t, e.in)
	if err := os.Symlink(pages[0], filepath.Join(e.in, "page.png")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-d", e.in, "--book-pages", "PHYS_0001"}, "--book-pages selects pages of a METS file or IIIF manifest, and no input of this run is one"},
		{[]string{"-f", filepath.Join(e.in, "page.png"), "--image-group", "MAX"}, "--image-group selects pages"},
	} {
		code, log := e.run(t, c.args...)
		if code != exitUsage || !strings.Contains(log, c.want) {
			t.Errorf("%v: exit %d, want %d and %q:\n%s", c.args, code, exitUsage, c.want, log)
		}
		if m, _ := filepath.Glob(filepath.Join(e.results, "*TOP*.csv")); len(m) > 0 {
			t.Errorf("%v: a refused run wrote %v", c.args, m)
		}
	}
}

// TestBookWindowsHrefNamed: a page whose image href is a Windows path
// (C:\scans\0002.png) is a failure row saying so; it said only "page
// without an image", the reason in a WARN line.
func TestBookWindowsHrefNamed(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := classifytest.Pages(t, 1)
	dir := filepath.Join(e.root, "kitodo")
	mkdir(t, filepath.Join(dir, "image"))
	for i := 1; i <= 4; i++ {
		if err := os.Symlink(pages[i], filepath.Join(dir, "image", fmt.Sprintf("%04d.png", i))); err != nil {
			t.Fatal(err)
		}
	}
	local := filepath.Join(dir, "mets.xml")
	rewrite(t, "kitodo-mets_with_pages.xml", local, "https://example.com/image/", "image/")
	b, err := os.ReadFile(local)
	if err != nil || !bytes.Contains(b, []byte("image/0002.png")) {
		t.Fatalf("the fixture has no image/0002.png: %v", err)
	}
	write(t, local, strings.Replace(string(b), "image/0002.png", `C:\scans\0002.png`, 1))
	if code, log := e.run(t, "-f", local); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	_, reasons := failureRows(t, e)
	var got string
	for item, why := range reasons {
		if strings.HasSuffix(item, "#PHYS_0002") {
			got = why
		}
	}
	if !strings.Contains(got, "page without an image") || !strings.Contains(got, `C:\scans\0002.png: a Windows path`) {
		t.Errorf("PHYS_0002's failure %q, want it to name the Windows path (failures %v)", got, reasons)
	}
}
