package main

import (
	"encoding/json"
	"image"
	_ "image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/paradata"
	"archivekit/internal/testenv"
)

// TestPDFRendererFlag: --pdf-renderer pdfium classifies a scanned PDF as
// poppler does (same rows, same first category on each page), records the
// renderer in the run metadata, and without the library fails at once,
// saying how to give it.
func TestPDFRendererFlag(t *testing.T) {
	lib := testenv.PDFium(t)
	pdf := scanPDF(t, 4, "")
	raw := func(renderer string) [][]string {
		e := newEnv(t, nil)
		e.model(t, "v4.4")
		doc := filepath.Join(e.root, "scan.pdf")
		write(t, doc, string(pdf))
		if code, log := e.run(t, "-f", doc, "--raw", "--pdf-renderer", renderer); code != exitOK {
			t.Fatalf("%s: exit %d: %s", renderer, code, log)
		}
		out := readCSV(t, e.output(t, "_v4.4_RAW.csv"))
		if got := readParadata(t, e).Config["pdf_renderer"]; got != renderer {
			t.Errorf("run metadata pdf_renderer %v, want %s", got, renderer)
		}
		return out
	}

	t.Setenv("PDFIUM_LIBRARY", filepath.Join(t.TempDir(), "libpdfium.so"))
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	doc := filepath.Join(e.root, "scan.pdf")
	write(t, doc, string(pdf))
	if code, log := e.run(t, "-f", doc, "--pdf-renderer", "pdfium"); code != exitUsage || !strings.Contains(log, "PDFIUM_LIBRARY") {
		t.Fatalf("without the library: exit %d: %s", code, log)
	}

	t.Setenv("PDFIUM_LIBRARY", lib)
	// The scores of the 11 categories of each page agree within 0.02.
	pop, pdfi := raw("poppler"), raw("pdfium")
	if len(pop) != 5 || len(pdfi) != len(pop) || strings.Join(pop[0], ",") != strings.Join(pdfi[0], ",") {
		t.Fatalf("tables differ in shape:\npoppler %q\npdfium  %q", pop, pdfi)
	}
	worst := 0.0
	for i := 1; i < len(pop); i++ {
		for j := range pop[i] {
			a, errA := strconv.ParseFloat(pop[i][j], 64)
			b, errB := strconv.ParseFloat(pdfi[i][j], 64)
			if errA != nil || errB != nil {
				if pop[i][j] != pdfi[i][j] {
					t.Errorf("row %d column %s: %q and %q", i, pop[0][j], pop[i][j], pdfi[i][j])
				}
				continue
			}
			worst = max(worst, math.Abs(a-b))
		}
	}
	if worst > 0.02 {
		t.Errorf("scores differ by up to %.4f between the renderers, want at most 0.02", worst)
	}
	t.Logf("4 pages: scores differ by at most %.4f between poppler and PDFium", worst)
}

// TestPDFPageLabels: the tables of a run whose input holds a PDF have
// PAGE_LABEL before SOURCE: the page's label in its PDF beside its number
// in PAGE; the
// document record labels its pages so; a resumed run (rows from the
// ledger) writes the same labels; a run without a PDF has no such column.
func TestPDFPageLabels(t *testing.T) {
	pdf := scanPDF(t, 3, "<< /Nums [0 << /S /r >> 2 << /S /D /St 12 /P (A-) >>] >>")
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	mkdir(t, e.in)
	write(t, filepath.Join(e.in, "book.pdf"), string(pdf))
	rec := filepath.Join(e.root, "book.document.json")
	labels := func() []string {
		recs := readCSV(t, e.output(t, "_v4.4_TOP-3.csv"))
		if h := recs[0]; h[len(h)-2] != "PAGE_LABEL" || h[len(h)-1] != "SOURCE" {
			t.Fatalf("header %q: want PAGE_LABEL then SOURCE at the end", h)
		}
		var out []string
		for _, r := range recs[1:] {
			out = append(out, r[1]+"="+r[len(r)-2])
		}
		return out
	}
	if code, log := e.run(t, "-d", e.in, "-ff", "pdf", "--document-json-out", rec); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	want := "1=i 2=ii 3=A-12"
	if got := strings.Join(labels(), " "); got != want {
		t.Errorf("PAGE=PAGE_LABEL %s, want %s", got, want)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{`"page": "i"`, `"page": "ii"`, `"page": "A-12"`, `"page_index": 3`} {
		if !strings.Contains(strings.ReplaceAll(string(b), `":"`, `": "`), l) {
			t.Errorf("record lacks %s:\n%.600s", l, b)
		}
	}
	os.RemoveAll(e.results)
	if code, log := e.run(t, "-d", e.in, "-ff", "pdf"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	first := labels()
	// The tables go; the ledger and the run metadata stay.
	tables, _ := filepath.Glob(filepath.Join(e.results, "*.csv"))
	for _, f := range tables {
		os.Remove(f)
	}
	if code, log := e.run(t, "-d", e.in, "-ff", "pdf", "--resume"); code != exitOK || !strings.Contains(log, "continuing from the ledger") {
		t.Fatalf("resume: exit %d: %s", code, log)
	}
	if got := labels(); strings.Join(got, " ") != strings.Join(first, " ") {
		t.Errorf("resumed labels %v, want %v", got, first)
	}

	plain := newEnv(t, nil)
	plain.linkPages(t, 1)
	plain.model(t, "v4.4")
	if code, log := plain.run(t, "-d", plain.in); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if h := readCSV(t, plain.output(t, "_v4.4_TOP-3.csv"))[0]; h[len(h)-2] == "PAGE_LABEL" {
		t.Errorf("a run without a PDF has a PAGE_LABEL column: %q", h)
	}
}

// scanPDF is a PDF as scanners write it (hostile.ScanPDF) of the first n
// sample pages (one per category) at 150 dpi, with the page-label tree
// tree ("" for none).
func scanPDF(t *testing.T, n int, tree string) []byte {
	t.Helper()
	var imgs []image.Image
	for _, p := range classifytest.Pages(t, 1)[:n] {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := image.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	pdf, err := hostile.ScanPDF(imgs, 150, tree)
	if err != nil {
		t.Fatal(err)
	}
	return pdf
}

// TestRowsNameTheirRenderer: a resumed run whose tables hold rows of an
// earlier run counts, in its run metadata, the PDF pages each renderer drew
// and the pages each decoding mode decoded, its own and the kept ones
// alike, and says so on its log; a ledger entry written before the
// decoding was recorded is counted as unrecorded.
func TestRowsNameTheirRenderer(t *testing.T) {
	testenv.PDFium(t)
	t.Setenv("PDFIUM_LIBRARY", os.Getenv("ARCHIVEKIT_PDFIUM"))
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	mkdir(t, e.in)
	write(t, filepath.Join(e.in, "a.pdf"), string(scanPDF(t, 2, "")))
	page := classifytest.Pages(t, 1)[0]
	if err := os.Symlink(page, filepath.Join(e.in, "p.png")); err != nil {
		t.Fatal(err)
	}
	type counts = map[string]tally
	// check reads the run metadata the run's log names (runs of one
	// second have stamps of their own, which do not sort by time).
	check := func(step, log string, wantRenderers, wantDecoding counts) {
		t.Helper()
		m := regexp.MustCompile(`"run metadata written","path":"([^"]+)"`).FindAllStringSubmatch(log, -1)
		if len(m) == 0 {
			t.Fatalf("%s: the log names no run metadata:\n%s", step, log)
		}
		b, err := os.ReadFile(m[len(m)-1][1])
		if err != nil {
			t.Fatal(err)
		}
		var doc paradata.Document
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		cfg := doc.Config
		for key, want := range map[string]counts{"pdf_renderers": wantRenderers, "decoding": wantDecoding} {
			b, err := json.Marshal(cfg[key])
			if err != nil {
				t.Fatal(err)
			}
			var got counts
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s: config.%s %s: %v", step, key, b, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: config.%s %v, want %v", step, key, got, want)
			}
		}
	}
	args := []string{"-d", e.in, "-ff", "pdf,png"}

	code, log := e.run(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	check("poppler", log, counts{"poppler": {Files: 1, Pages: 2}}, counts{"decoder_processes": {Files: 2, Pages: 3}})

	write(t, filepath.Join(e.in, "b.pdf"), string(scanPDF(t, 1, "")))
	code, log = e.run(t, append(args, "--resume", "--pdf-renderer", "pdfium")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if !strings.Contains(log, "drawn by another renderer") {
		t.Errorf("the log does not say that kept rows were drawn by poppler:\n%s", log)
	}
	check("pdfium after poppler", log, counts{"poppler": {Files: 1, Pages: 2}, "pdfium": {Files: 1, Pages: 1}},
		counts{"decoder_processes": {Files: 3, Pages: 4}})

	// An entry of a ledger written before the decoding was recorded.
	ledgers, _ := filepath.Glob(filepath.Join(e.results, LedgerFolder, "*", "*.jsonl"))
	if len(ledgers) == 0 {
		t.Fatal("no ledger file")
	}
	for _, f := range ledgers {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write(t, f, strings.ReplaceAll(string(b), `,"decoding":"decoder_processes"`, ""))
	}
	if err := os.Symlink(classifytest.Pages(t, 1)[1], filepath.Join(e.in, "q.png")); err != nil {
		t.Fatal(err)
	}
	code, log = e.run(t, append(args, "--resume", "--decode-in-process")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if !strings.Contains(log, "decoded in another mode") {
		t.Errorf("the log does not say that kept rows were decoded otherwise:\n%s", log)
	}
	check("in process after both", log, counts{"poppler": {Files: 1, Pages: 2}, "pdfium": {Files: 1, Pages: 1}},
		counts{"unrecorded": {Files: 3, Pages: 4}, "in_process": {Files: 1, Pages: 1}})
}
