package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/book/booktest"
	"archivekit/internal/bookout"
	"archivekit/internal/bookout/bookouttest"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/paradata"
)

// TestBookOutIIIF: --book-out DIR on a IIIF Presentation 3 manifest (the
// loopback IIIF stand-in) writes one annotation page per canvas, each
// holding the classes and scores of that canvas's row in the run's TOP-N
// table (--topn 4: four classifying annotations on the canvas, best
// first), and, for the blank page the REVIEW table flags, a commenting
// annotation carrying NEEDS_REVIEW's flag and the REASONS; and the derived
// manifest linking each page from its canvas; they load in iiif-prezi3. A
// Presentation 2 manifest gets the same as annotation lists
// (checkBookOutV2).
func TestBookOutIIIF(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	blank := filepath.Join(e.root, "blank.png")
	write(t, blank, blankPage(t))
	s := booktest.New(t, append(classifytest.Pages(t, 1)[:2], blank), 3, true)
	dir, res := filepath.Join(e.root, "book-out"), filepath.Join(e.root, "r3")
	code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private", "--results", res, "--book-out", dir, "--topn", "4")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	// No --book-base-url: the ids are file:// URLs, and the run says so once.
	if n := strings.Count(log, "IIIF ids are file:// URLs of "+dir+": viewers"); n != 1 {
		t.Errorf("%d warnings that the ids are file:// URLs, want 1:\n%s", n, log)
	}
	top, rv := csvByCanvas(t, res, "_TOP-4.csv"), csvByCanvas(t, res, "_REVIEW.csv")
	var pages []string
	for i := 1; i <= 3; i++ {
		path := filepath.Join(dir, "manifest_classes", fmt.Sprintf("%d.json", i))
		pages = append(pages, path)
		canvas := fmt.Sprintf("%s/iiif/book/canvas/p%d", s.URL, i)
		items := annotationItems(t, path)
		row, review := top[canvas], rv[canvas]
		if row == nil || review == nil {
			t.Fatalf("%s: no TOP-4 or REVIEW row", canvas)
		}
		flagged := review["NEEDS_REVIEW"] == "yes"
		if flagged != (i == 3) {
			t.Errorf("%s: NEEDS_REVIEW %q (REASONS %q); want only the blank page flagged", canvas, review["NEEDS_REVIEW"], review["REASONS"])
		}
		want := 4
		if flagged {
			want++
		}
		if len(items) != want {
			t.Fatalf("%s: %d annotations, want the 4 classes of the TOP-4 row and the flag of the REVIEW row (%v)", path, len(items), review["NEEDS_REVIEW"])
		}
		for k, a := range items[:4] {
			class, score := row[fmt.Sprintf("CLASS-%d", k+1)], row[fmt.Sprintf("SCORE-%d", k+1)]
			got := strconv.FormatFloat(a.Body.Score, 'f', 4, 64)
			if a.Motivation != "classifying" || a.Target != canvas || a.Body.Purpose != "classifying" || a.Body.Value != class || got != score ||
				!slices.Contains(modelmeta.Categories, a.Body.Value) {
				t.Errorf("%s: annotation %d %+v, want the TOP-4 row's CLASS-%d %s SCORE-%d %s", path, k+1, a, k+1, class, k+1, score)
			}
		}
		if flagged {
			a := items[4]
			reasons := strings.Split(review["REASONS"], ";")
			if a.Motivation != "commenting" || a.Target != canvas || a.Body.Purpose != "assessing" || !slices.Equal(a.Body.Reasons, reasons) ||
				a.Body.Value != "needs review: "+strings.Join(reasons, ", ") || !slices.Contains(reasons, "near_blank") {
				t.Errorf("%s: review annotation %+v, want the REVIEW row's flag and REASONS %q", path, a, review["REASONS"])
			}
		}
	}
	manifest := filepath.Join(dir, "manifest_classes.json")
	var m struct {
		Items []struct {
			ID          string
			Annotations []struct{ ID string }
		}
	}
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Items) != 3 {
		t.Fatalf("derived manifest: %d canvases", len(m.Items))
	}
	for i, c := range m.Items {
		if len(c.Annotations) != 1 || !strings.HasSuffix(c.Annotations[0].ID, fmt.Sprintf("/book-out/manifest_classes/%d.json", i+1)) {
			t.Errorf("canvas %s: annotations %+v", c.ID, c.Annotations)
		}
	}
	t.Logf("iiif-prezi3: %s", bookouttest.Prezi3(t, manifest, pages...))

	v2 := booktest.New(t, append(classifytest.Pages(t, 1)[:1], blank), 2, false)
	dir2, res2 := filepath.Join(e.root, "book-out-v2"), filepath.Join(e.root, "r2")
	code, log = e.run(t, "-f", v2.ManifestURL(), "--fetch-private", "--results", res2, "--book-out", dir2, "--topn", "2",
		"--book-base-url", "https://example.org/pub/book-out-v2") // iiif-prezi's reader takes HTTP(S) ids only
	if code != exitOK || strings.Contains(log, "no annotation pages written") || strings.Contains(log, "ids are file://") {
		t.Fatalf("v2: exit %d: %s", code, log)
	}
	checkBookOutV2(t, v2.URL, dir2, res2)
}

// checkBookOutV2 checks what --book-out dir wrote for the Presentation 2
// manifest of two canvases (the second blank) served at base, classified
// with --topn 2 --results res, as a viewer of v2 reads it: the derived
// manifest's canvases name their sc:AnnotationList in otherContent; each
// list's annotations are on that canvas, the TOP-2 row's classes
// (oa:classifying, the category as cnt:ContentAsText chars, its score)
// and, for the flagged blank page, an oa:commenting one with the REVIEW
// row's reasons; all load in iiif-prezi's 2.1 reader.
func checkBookOutV2(t *testing.T, base, dir, res string) {
	t.Helper()
	top, rv := csvByCanvas(t, res, "_TOP-2.csv"), csvByCanvas(t, res, "_REVIEW.csv")
	manifest := filepath.Join(dir, "manifest_classes.json")
	var m struct {
		Type      string `json:"@type"`
		Sequences []struct {
			Canvases []struct {
				ID           string `json:"@id"`
				OtherContent []struct {
					ID   string `json:"@id"`
					Type string `json:"@type"`
				} `json:"otherContent"`
			} `json:"canvases"`
		} `json:"sequences"`
	}
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Type != "sc:Manifest" || len(m.Sequences) != 1 || len(m.Sequences[0].Canvases) != 2 {
		t.Fatalf("v2 derived manifest (%v): %s", err, raw)
	}
	var lists []string
	for i, c := range m.Sequences[0].Canvases {
		canvas := fmt.Sprintf("%s/iiif/book/canvas/p%d", base, i+1)
		if c.ID != canvas || len(c.OtherContent) != 1 || c.OtherContent[0].Type != "sc:AnnotationList" ||
			c.OtherContent[0].ID != fmt.Sprintf("https://example.org/pub/book-out-v2/manifest_classes/%d.json", i+1) {
			t.Fatalf("canvas %s: otherContent %+v", c.ID, c.OtherContent)
		}
		path := filepath.Join(dir, "manifest_classes", fmt.Sprintf("%d.json", i+1))
		lists = append(lists, path)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var l struct {
			ID        string `json:"@id"`
			Resources []struct {
				Motivation, On string
				Resource       struct {
					Type    string `json:"@type"`
					Chars   string
					Score   float64
					Reasons []string
				}
			}
		}
		if err := json.Unmarshal(raw, &l); err != nil || l.ID != c.OtherContent[0].ID {
			t.Fatalf("%s (%v): %s", path, err, raw)
		}
		row, review := top[canvas], rv[canvas]
		flagged := review["NEEDS_REVIEW"] == "yes"
		if flagged != (i == 1) {
			t.Errorf("%s: NEEDS_REVIEW %q; want only the blank page flagged", canvas, review["NEEDS_REVIEW"])
		}
		want := 2
		if flagged {
			want++
		}
		if len(l.Resources) != want {
			t.Fatalf("%s: %d annotations, want the TOP-2 row's 2 classes and the REVIEW row's flag (%v)", path, len(l.Resources), flagged)
		}
		for k, a := range l.Resources {
			if a.On != canvas || a.Resource.Type != "cnt:ContentAsText" {
				t.Errorf("%s: annotation %d %+v, want on %s", path, k+1, a, canvas)
			}
			if k == 2 {
				reasons := strings.Split(review["REASONS"], ";")
				if a.Motivation != "oa:commenting" || !slices.Equal(a.Resource.Reasons, reasons) || a.Resource.Chars != "needs review: "+strings.Join(reasons, ", ") {
					t.Errorf("%s: review annotation %+v, want REASONS %q", path, a, review["REASONS"])
				}
				continue
			}
			class, score := row[fmt.Sprintf("CLASS-%d", k+1)], row[fmt.Sprintf("SCORE-%d", k+1)]
			if a.Motivation != "oa:classifying" || a.Resource.Chars != class || strconv.FormatFloat(a.Resource.Score, 'f', 4, 64) != score {
				t.Errorf("%s: annotation %d %+v, want the TOP-2 row's CLASS-%d %s SCORE-%d %s", path, k+1, a, k+1, class, k+1, score)
			}
		}
	}
	t.Logf("iiif-prezi: %s", bookouttest.Prezi2(t, manifest, lists...))
}

// TestBookOutEnsemble: an ensemble run's annotation pages hold the classes
// and scores of the canvas's AVG_TOP-N row (the averaged table; a class
// it leaves blank is left out); with --no-average-best, which writes no
// averaged table, each holds the averaged top class alone, the same one.
func TestBookOutEnsemble(t *testing.T) {
	e := newEnv(t, nil)
	classifytest.Ensemble(t, e.models)
	s := booktest.New(t, classifytest.Pages(t, 1)[3:5], 2, true)
	var top1 []bookAnnotation
	for _, avg := range []bool{true, false} {
		dir, res := filepath.Join(e.root, fmt.Sprint("book-out-", avg)), filepath.Join(e.root, fmt.Sprint("r-", avg))
		args := []string{"-f", s.ManifestURL(), "--fetch-private", "--results", res, "--book-out", dir, "--best", "--topn", "2"}
		if !avg {
			args = append(args, "--no-average-best")
		}
		if code, log := e.run(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, log)
		}
		var rows map[string]map[string]string
		if avg {
			rows = csvByCanvas(t, res, "_AVG_TOP-2.csv")
		}
		for i := 1; i <= 2; i++ {
			canvas := fmt.Sprintf("%s/iiif/book/canvas/p%d", s.URL, i)
			items := annotationItems(t, filepath.Join(dir, "manifest_classes", fmt.Sprintf("%d.json", i)))
			if !avg {
				if len(items) != 1 || items[0].Body.Value != top1[i-1].Body.Value || math.Abs(items[0].Body.Score-top1[i-1].Body.Score) > 5e-5 {
					t.Errorf("--no-average-best: %s: %+v, want the averaged top class %+v", canvas, items, top1[i-1])
				}
				continue
			}
			var want []string
			for k := 1; k <= 2; k++ {
				if c := rows[canvas][fmt.Sprintf("CLASS-%d", k)]; c != "" {
					want = append(want, c+" "+rows[canvas][fmt.Sprintf("SCORE-%d", k)])
				}
			}
			var got []string
			for _, a := range items {
				got = append(got, a.Body.Value+" "+strconv.FormatFloat(a.Body.Score, 'f', 4, 64))
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("%s: annotations %v, want the AVG_TOP-2 row's %v", canvas, got, want)
			}
			top1 = append(top1, items[0])
		}
		// Each annotation's generator names the five models that made it,
		// by revision and digest, and the run's licence (it named the
		// tool alone, so a demo model's class read as a published one's).
		raw, _ := os.ReadFile(filepath.Join(dir, "manifest_classes", "1.json"))
		var page struct {
			Items []struct{ Generator struct{ Name string } }
		}
		if err := json.Unmarshal(raw, &page); err != nil || len(page.Items) == 0 {
			t.Fatalf("annotation page: %v %s", err, raw)
		}
		var d paradata.Document
		if m, _ := filepath.Glob(filepath.Join(res, "*_page-classification.json")); len(m) != 1 {
			t.Fatalf("run metadata %v", m)
		} else if b, _ := os.ReadFile(m[0]); json.Unmarshal(b, &d) != nil {
			t.Fatalf("run metadata %s", b)
		}
		gen := page.Items[0].Generator.Name
		if !strings.HasPrefix(gen, "archivekit pageclass ") || strings.Count(gen, " sha256:") != 5 || !strings.Contains(gen, "models v1.4 sha256:") ||
			!strings.HasSuffix(gen, "; "+d.License+")") || strings.Contains(gen, "DEMO") {
			t.Errorf("generator %q; want the five models with their digests and the licence %s", gen, d.License)
		}
	}
}

// bookAnnotation is what the tests read of a class annotation.
type bookAnnotation struct {
	Motivation, Target string
	Body               struct {
		Value, Purpose string
		Score          float64
		Reasons        []string
	}
}

// annotationItems reads the annotations of the annotation page path.
func annotationItems(t *testing.T, path string) []bookAnnotation {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var page struct{ Items []bookAnnotation }
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return page.Items
}

// csvByCanvas reads the only table of dir whose name ends with suffix and
// returns its rows, each by column name, by BOOK_PAGE_ID (the canvas).
func csvByCanvas(t *testing.T, dir, suffix string) map[string]map[string]string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if len(m) != 1 {
		t.Fatalf("%d tables end with %s in %s", len(m), suffix, dir)
	}
	recs := readCSV(t, m[0])
	rows := map[string]map[string]string{}
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, c := range rec {
			row[recs[0][i]] = c
		}
		rows[row["BOOK_PAGE_ID"]] = row
	}
	return rows
}

// TestBookOutShards: a --shard run shares a book's pages, so no share
// writes the book's annotation pages (before, each wrote its own canvases'
// pages, numbered in its own order, over the other's, and a manifest
// linking its canvases alone); each says how they are written. The
// --resume --book-out run without --shard into the shares' results folder
// writes every canvas's, fetching and classifying no page again.
func TestBookOutShards(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	s := booktest.New(t, classifytest.Pages(t, 1)[:3], 3, true)
	dir, res := filepath.Join(e.root, "book-out"), filepath.Join(e.root, "shards")
	for i := range 2 {
		code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private", "--results", res, "--book-out", dir, "--shard", fmt.Sprintf("%d/2", i))
		if code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, code, log)
		}
		if !strings.Contains(log, "the shards share the books' pages") || !strings.Contains(log, "--resume --book-out") {
			t.Errorf("shard %d says nothing of the annotation pages not written:\n%s", i, log)
		}
		if _, err := os.Stat(filepath.Join(dir, "manifest_classes.json")); !os.IsNotExist(err) {
			t.Fatalf("shard %d wrote the derived manifest (%v)", i, err)
		}
	}
	images := func() int {
		n := 0
		for p, k := range s.Requests() {
			if strings.Contains(p, "/iiif/img/") && !strings.HasSuffix(p, "/info.json") {
				n += k
			}
		}
		return n
	}
	fetched := images()
	if fetched == 0 {
		t.Fatal("the shards fetched no page image")
	}
	code, log := e.run(t, "-f", s.ManifestURL(), "--fetch-private", "--results", res, "--book-out", dir, "--resume")
	if code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, log)
	}
	for i := 1; i <= 3; i++ {
		items := annotationItems(t, filepath.Join(dir, "manifest_classes", fmt.Sprintf("%d.json", i)))
		canvas := fmt.Sprintf("%s/iiif/book/canvas/p%d", s.URL, i)
		if len(items) == 0 || items[0].Target != canvas {
			t.Errorf("annotation page %d: %+v, want canvas %s's classes", i, items, canvas)
		}
	}
	if n := images() - fetched; n != 0 {
		t.Errorf("the resumed run fetched %d page images, want none", n)
	}
}

// TestBookOutCollection: a IIIF Presentation 3 collection of two
// manifests (on two servers; the first listed by reference, the second
// embedded whole) gives, with --book-out, each manifest's annotation pages
// and derived manifest (<collection>_<k>_classes), each page's classes
// those of its TOP-3 row, and the derived collection
// <collection>_classes.json listing the derived manifests in the place of
// the manifests; the manifests and the collection load in iiif-prezi3.
// Before, a collection got a warning and nothing.
func TestBookOutCollection(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := classifytest.Pages(t, 1)[:2]
	s1, s2 := booktest.New(t, pages, 2, true), booktest.New(t, pages, 2, true)
	resp, err := http.Get(s2.ManifestURL())
	if err != nil {
		t.Fatal(err)
	}
	embedded, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	coll := fmt.Sprintf(`{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "https://example.org/coll.json", "type": "Collection",
 "label": {"en": ["Two volumes"]},
 "items": [{"id": %q, "type": "Manifest", "label": {"en": ["Volume 1"]}}, %s]}`, s1.ManifestURL(), embedded)
	collPath := filepath.Join(e.root, "volumes.json")
	write(t, collPath, coll)
	dir, res := filepath.Join(e.root, "book-out"), filepath.Join(e.root, "r")
	code, log := e.run(t, "-f", collPath, "--fetch-private", "--results", res, "--book-out", dir, "--book-base-url", "https://example.org/pub", "--topn", "3")
	if code != exitOK || strings.Contains(log, "no annotation pages written") || strings.Contains(log, "a manifest of the collection") {
		t.Fatalf("exit %d: %s", code, log)
	}
	top := csvByCanvas(t, res, "_TOP-3.csv")
	for k, s := range []*booktest.Server{s1, s2} {
		stem := fmt.Sprintf("volumes_%d_classes", k+1)
		manifest := filepath.Join(dir, stem+".json")
		var m struct {
			ID    string
			Items []struct {
				ID          string
				Annotations []struct{ ID string }
			}
		}
		raw, err := os.ReadFile(manifest)
		if err != nil || json.Unmarshal(raw, &m) != nil {
			t.Fatalf("manifest %d: %v", k+1, err)
		}
		if m.ID != "https://example.org/pub/"+stem+".json" || len(m.Items) != 2 {
			t.Fatalf("manifest %d: id %s, %d canvases", k+1, m.ID, len(m.Items))
		}
		var annPages []string
		for i, c := range m.Items {
			canvas := fmt.Sprintf("%s/iiif/book/canvas/p%d", s.URL, i+1)
			want := fmt.Sprintf("https://example.org/pub/%s/%d.json", stem, i+1)
			if c.ID != canvas || len(c.Annotations) != 1 || c.Annotations[0].ID != want {
				t.Fatalf("manifest %d canvas %d: %s %+v, want %s linking %s", k+1, i+1, c.ID, c.Annotations, canvas, want)
			}
			path := filepath.Join(dir, stem, fmt.Sprintf("%d.json", i+1))
			annPages = append(annPages, path)
			items, row := annotationItems(t, path), top[canvas]
			if row == nil || len(items) < 3 {
				t.Fatalf("%s: %d annotations, row %v", path, len(items), row)
			}
			for j, a := range items[:3] {
				if a.Target != canvas || a.Body.Value != row[fmt.Sprintf("CLASS-%d", j+1)] {
					t.Errorf("%s: annotation %d %+v, want class %s on %s", path, j+1, a, row[fmt.Sprintf("CLASS-%d", j+1)], canvas)
				}
			}
		}
		t.Logf("iiif-prezi3, manifest %d: %s", k+1, bookouttest.Prezi3(t, manifest, annPages...))
	}
	var c struct {
		ID    string
		Type  string
		Items []map[string]any
	}
	collOut := filepath.Join(dir, "volumes_classes.json")
	raw, err := os.ReadFile(collOut)
	if err != nil || json.Unmarshal(raw, &c) != nil {
		t.Fatalf("derived collection: %v", err)
	}
	if c.ID != "https://example.org/pub/volumes_classes.json" || c.Type != "Collection" || len(c.Items) != 2 {
		t.Fatalf("derived collection: %s", raw)
	}
	for k, it := range c.Items {
		if it["id"] != fmt.Sprintf("https://example.org/pub/volumes_%d_classes.json", k+1) || it["type"] != "Manifest" || it["items"] != nil || it["label"] == nil {
			t.Errorf("member %d: %v, want a reference to the derived manifest", k+1, it)
		}
	}
	t.Logf("iiif-prezi3, collection: %s", bookouttest.Prezi3Collection(t, collOut))
}

// TestRankedClasses: --book-out annotates the classes of a TOP-N row that
// have a score, best first; a class the table writes with score 0.0000 (a
// single model's near-certain page) gets no annotation, and a score that
// is not a number is an error naming its cell.
func TestRankedClasses(t *testing.T) {
	for _, c := range []struct {
		name string
		row  map[string]string
		want []bookout.PageClass
		err  string
	}{
		{"three scored", map[string]string{"CLASS-1": "TEXT", "SCORE-1": "0.7000", "CLASS-2": "TEXT_P", "SCORE-2": "0.2000", "CLASS-3": "DRAW", "SCORE-3": "0.1000"},
			[]bookout.PageClass{{Category: "TEXT", Score: 0.7}, {Category: "TEXT_P", Score: 0.2}, {Category: "DRAW", Score: 0.1}}, ""},
		{"one model, near certain", map[string]string{"CLASS-1": "PHOTO", "SCORE-1": "1.0000", "CLASS-2": "DRAW", "SCORE-2": "0.0000", "CLASS-3": "TEXT", "SCORE-3": "0.0000"},
			[]bookout.PageClass{{Category: "PHOTO", Score: 1}}, ""},
		{"empty cell", map[string]string{"CLASS-1": "TEXT", "SCORE-1": "0.9", "CLASS-2": "", "SCORE-2": ""},
			[]bookout.PageClass{{Category: "TEXT", Score: 0.9}}, ""},
		{"not a number", map[string]string{"CLASS-1": "TEXT", "SCORE-1": "high"}, nil, `SCORE-1 "high"`},
	} {
		got, err := rankedClasses(c.row)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want one naming %s", c.name, err, c.err)
			}
		case err != nil || !slices.Equal(got, c.want):
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
