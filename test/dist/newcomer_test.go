package dist

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"image"
	"image/draw"
	"image/jpeg"
	_ "image/png" // the sample pages
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/pageclass/glossary"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/summary"
	"archivekit/internal/translate/translator/translatortest"
)

// TestNewcomerSession is the first touch of issue 27, scripted: the release
// tarball unpacked into a fresh folder and run as an unprivileged user (as
// root: the nobody account; as another user: that user) on an archivist's
// own folder, made at test time from the shared sample pages (nothing is
// copied into the repository): PNG pages named by date and with a
// zero-padded number, a JPEG, a multi-page TIFF and a PDF, and a text
// file; then on an ALTO file with a local MT stand-in. Every page gets a
// row joinable to its file, the summary's counts add up, the glossary is
// reachable from --help, and no readable file is skipped without a word.
func TestNewcomerSession(t *testing.T) {
	root, work := tree(t)
	if os.Getuid() == 0 {
		t.Logf("running as root: the session runs as uid %d (nobody)", nobody)
	} else {
		t.Logf("running as uid %d: the session runs as this user", os.Getuid())
	}

	t.Run("--help leads to the glossary", func(t *testing.T) {
		code, out := run(t, command(root, work, "pageclass", nil, "--help"))
		if code != 0 || !strings.Contains(out, glossary.Installed) {
			t.Fatalf("pageclass --help: exit %d, does not name %s:\n%s", code, glossary.Installed, out)
		}
		doc, err := os.ReadFile(filepath.Join(root, glossary.Installed))
		if err != nil {
			t.Fatalf("the glossary --help names is not in the tree: %v", err)
		}
		for _, e := range glossary.Entries {
			if !strings.Contains(out, e.Category) || !strings.Contains(string(doc), "| "+e.Category+" | "+e.Description+" |") {
				t.Errorf("%s: not in --help, or not described in %s", e.Category, glossary.Installed)
			}
		}
	})

	scans, pages := newcomerFolder(t, work)
	t.Run("a first run with the defaults says what it left", func(t *testing.T) {
		results := filepath.Join(work, "results-first")
		code, out := run(t, command(root, work, "pageclass", nil, "--best", "-d", scans, "--results", results))
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		s := runSummary(t, results)
		// the default takes PNG (spec 2.8): the other readable files are
		// counted by extension, in the log and the summary
		want := map[string]int{".jpg": 1, ".tif": 1, ".pdf": 1}
		for ext, n := range want {
			if s.NotCollected[ext] != n {
				t.Errorf("summary not_collected %v, want %s: %d", s.NotCollected, ext, n)
			}
		}
		if !strings.Contains(out, "not collected") || !strings.Contains(out, "-ff all") {
			t.Errorf("the log does not say what was left and how to take it:\n%s", out)
		}
		if s.Pages != 2 || s.Sources["1878-01-03.png"] != 1 || s.Sources["scan-09.png"] != 1 {
			t.Errorf("first run: %d pages, sources %v; want the two PNG pages", s.Pages, s.Sources)
		}
	})

	t.Run("-ff all classifies every page, each row joinable to its file", func(t *testing.T) {
		results := filepath.Join(work, "results-all")
		code, out := run(t, command(root, work, "pageclass", nil, "--best", "-d", scans, "-ff", "all", "--results", results))
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		rows := sourceRows(t, results)
		total := 0
		for src, n := range pages {
			total += n
			if rows[src] != n {
				t.Errorf("%s: %d rows, want %d (one a page)", src, rows[src], n)
			}
		}
		for src := range rows {
			if _, err := os.Stat(filepath.Join(scans, src)); err != nil {
				t.Errorf("row SOURCE %q is not a file of the folder: %v", src, err)
			}
		}
		s := runSummary(t, results)
		if s.Pages != total || s.Failed != 0 || len(s.NotCollected) != 0 {
			t.Errorf("summary: %d pages (want %d), %d failed, not collected %v", s.Pages, total, s.Failed, s.NotCollected)
		}
		for src, n := range pages {
			if s.Sources[src] != n {
				t.Errorf("summary source %s: %d pages, want %d", src, s.Sources[src], n)
			}
		}
		for c := range s.Categories {
			if modelmeta.CategoryIndex(c) < 0 {
				t.Errorf("summary category %q is not one of the glossary's", c)
			}
		}
	})

	t.Run("an ALTO file through a local MT stand-in", func(t *testing.T) {
		mt := translatortest.New(translatortest.Config{})
		defer mt.Close()
		alto, out, log := translateSample(t, root, work, mt.URL, "data/translator/alto/MTX201501307_anon.alto.xml")
		outs, _ := filepath.Glob(filepath.Join(out, "MTX201501307_anon*en*.xml"))
		if len(outs) != 1 {
			t.Fatalf("translated ALTO: %v\n%s", outs, log)
		}
		got, _ := os.ReadFile(outs[0])
		orig, _ := os.ReadFile(alto)
		if bytes.Equal(got, orig) || mt.Posts.Load() == 0 {
			t.Errorf("the ALTO was not translated (%d requests to the MT stand-in)", mt.Posts.Load())
		}
		var meta struct {
			Statistics struct {
				Translated int `json:"units_translated"`
			} `json:"statistics"`
		}
		metas, _ := filepath.Glob(filepath.Join(out, "*.json"))
		for _, m := range metas {
			b, _ := os.ReadFile(m)
			_ = json.Unmarshal(b, &meta)
		}
		if meta.Statistics.Translated == 0 {
			t.Errorf("run metadata in %s counts no translated unit: %v", out, metas)
		}
	})
}

// translateSample copies the shared sample file rel into work and
// translates it from Czech with the tree's translate through the MT API at
// url into work/translated; it returns the copy, the output folder and the
// log.
func translateSample(t *testing.T, root, work, url, rel string) (in, out, log string) {
	t.Helper()
	in = copyIn(t, shared(t, rel), work)
	out = filepath.Join(work, "translated")
	code, log := run(t, command(root, work, "translate", []string{"TRANSLATION_URL=" + url}, in, "-o", out, "--source_lang", "cs"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, log)
	}
	return in, out, log
}

// newcomerFolder makes the archivist's folder "my scans" in work from the
// shared sample pages and returns it with the pages of each readable file
// (by its name as on disk). notes.txt is not a page.
func newcomerFolder(t *testing.T, work string) (string, map[string]int) {
	t.Helper()
	dir := filepath.Join(work, "my scans")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := []string{"TEXT_P/atrium-22.png", "LINE_P/atrium-02.png", "TEXT_T/pages_online_11.png", "DRAW/atrium-34.png",
		"TEXT_HW/pages_online_14.png", "PHOTO/caa_conference-15.png", "LINE_HW/pages_online_24.png"}
	var imgs []image.Image
	for i, s := range src {
		p := copyIn(t, shared(t, "data/pages/"+s), work)
		if i < 2 {
			name := []string{"1878-01-03.png", "scan-09.png"}[i]
			if err := os.Rename(p, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := image.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		imgs = append(imgs, img)
		os.Remove(p)
	}
	jpg := encodeJPEG(t, imgs[0])
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("letter 1923.jpg", jpg)
	var grey []*image.Gray
	for _, img := range imgs[1:4] {
		g := image.NewGray(img.Bounds())
		draw.Draw(g, g.Bounds(), img, img.Bounds().Min, draw.Src)
		grey = append(grey, g)
	}
	write("master_0001.tif", hostile.GrayTIFF(grey...))
	pdf, err := hostile.ScanPDF([]image.Image{imgs[3], imgs[4]}, 150, "")
	if err != nil {
		t.Fatal(err)
	}
	write("report.pdf", pdf)
	write("notes.txt", []byte("box 3, folder 2: letters 1878-1923\n"))
	return dir, map[string]int{"1878-01-03.png": 1, "scan-09.png": 1, "letter 1923.jpg": 1, "master_0001.tif": 3, "report.pdf": 2}
}

func encodeJPEG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// runSummary reads the summary table of the one run in results and checks
// that its counts add up.
func runSummary(t *testing.T, results string) *summary.Summary {
	t.Helper()
	tables, _ := filepath.Glob(filepath.Join(results, "*_"+summary.TableName))
	if len(tables) != 1 {
		t.Fatalf("summary tables in %s: %v, want one", results, tables)
	}
	s, err := summary.ReadTable(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	sum := func(m map[string]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	}
	if sum(s.Categories) != s.Pages || sum(s.Sources) != s.Pages || sum(s.Failures) != s.Failed {
		t.Errorf("summary counts do not add up: %d pages, %d by category, %d by source; %d failed, %d by file",
			s.Pages, sum(s.Categories), sum(s.Sources), s.Failed, sum(s.Failures))
	}
	return s
}

// sourceRows counts the rows of the ensemble's Top-N table by their SOURCE
// (the input's path relative to the folder, as on disk).
func sourceRows(t *testing.T, results string) map[string]int {
	t.Helper()
	tables, _ := filepath.Glob(filepath.Join(results, "*_BEST_5_models_AVG_TOP-*.csv"))
	if len(tables) != 1 {
		all, _ := filepath.Glob(filepath.Join(results, "*.csv"))
		t.Fatalf("ensemble Top-N tables: %v (of %v), want one", tables, all)
	}
	f, err := os.Open(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v", tables[0], err)
	}
	col := -1
	for i, h := range recs[0] {
		if h == "SOURCE" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("%s has no SOURCE column: %v", tables[0], recs[0])
	}
	rows := map[string]int{}
	for _, r := range recs[1:] {
		rows[r[col]]++
	}
	return rows
}
