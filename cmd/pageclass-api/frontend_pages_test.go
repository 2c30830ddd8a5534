package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/modelmeta"
)

// TestFrontendPages: the web page's Pages field, shown while a PDF is
// chosen, selects the pages /predict_document classifies, and each page
// shows its PDF page label beside its number (a label that is the number
// itself is not repeated); a malformed selection shows the service's 422;
// the field shows for a TIFF too and selects its pages;
// an image is classified without the field (which /predict_image refuses),
// and the field is hidden then. The page says MAX_PDF_PAGES (from /info).
// A screenshot goes to test/artifacts/.
func TestFrontendPages(t *testing.T) {
	ctx := chromium(t)
	// MAX_PDF_PAGES=4: the five-page PDF is classified by its selection.
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "MAX_PDF_PAGES": "4"}, nil)
	dir := t.TempDir()
	pdf := filepath.Join(dir, "book.pdf")
	// Labels i, ii, then 3, 4 (decimal from 3), 5 (label 12a).
	if err := os.WriteFile(pdf, labelledPDF(5, "<< /Nums [0 << /S /r >> 2 << /S /D /St 3 >> 4 << /P (12a) >>] >>"), 0o644); err != nil {
		t.Fatal(err)
	}
	samples := classifytest.Pages(t, 1)
	img := samples[7]
	tiff := filepath.Join(dir, "scan.tif")
	if err := os.WriteFile(tiff, hostile.GrayTIFF(greyPage(t, samples[0]), greyPage(t, samples[7]), greyPage(t, samples[2])), 0o644); err != nil {
		t.Fatal(err)
	}

	rows := `[...document.querySelectorAll('#table tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))`
	var hiddenAtFirst bool
	var intro string
	var table [][]string
	var titles []string
	var status, csvText, jsonText string
	var shot []byte
	// classified sets the Pages field, submits the form and reads the
	// status and the table once the pages are shown.
	classified := func(pages string) chromedp.Tasks {
		return chromedp.Tasks{
			chromedp.SetValue("#pages", pages),
			chromedp.Click("#submit"),
			chromedp.WaitVisible("#batch"),
			chromedp.Text("#status", &status),
			chromedp.Evaluate(rows, &table),
		}
	}
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.WaitReady(`#legend-table tbody tr`), // /info has answered
		chromedp.Text("header p", &intro),
		chromedp.Evaluate(`document.querySelector('#pages-field').hidden`, &hiddenAtFirst),
		chromedp.SetUploadFiles("#file", []string{pdf}),
		chromedp.WaitVisible("#pages"),
		classified(" 2-3, 5"),
		chromedp.Evaluate(`[...document.querySelectorAll('.page h2')].map(h => h.textContent)`, &titles),
		chromedp.Evaluate(`fetch(document.querySelector('#download-csv').href).then(r => r.text())`, &csvText, awaitPromise),
		chromedp.Evaluate(`fetch(document.querySelector('#download-json').href).then(r => r.text())`, &jsonText, awaitPromise),
		chromedp.FullScreenshot(&shot, 100),
	)
	if err != nil {
		t.Fatal(err)
	}
	saveShot(t, "frontend-pages.png", shot)
	if !strings.Contains(intro, "at most 4 pages of each classified") {
		t.Errorf("introduction %q, want MAX_PDF_PAGES from /info", intro)
	}
	if !hiddenAtFirst {
		t.Error("the Pages field is shown before a document is chosen")
	}
	want := []string{"2 (label ii)", "3", "5 (label 12a)"}
	var pages []string
	for i, r := range table {
		pages = append(pages, r[1])
		if r[0] != "book.pdf" || modelmeta.CategoryIndex(r[2]) < 0 || strings.HasPrefix(r[5], "Failed") {
			t.Errorf("row %d: %q, want book.pdf's page classified", i, r)
		}
	}
	if !slices.Equal(pages, want) {
		t.Errorf("table pages %q, want %q", pages, want)
	}
	if wantTitles := []string{"Page 2 (label ii)", "Page 3", "Page 5 (label 12a)"}; !slices.Equal(titles, wantTitles) {
		t.Errorf("cards %q, want %q", titles, wantTitles)
	}
	if !strings.Contains(status, "book.pdf: 3 of 5 page(s), ensemble") {
		t.Errorf("status %q", status)
	}
	// The downloads carry each page's label beside its number (page_label,
	// the CSV's last column): the PDF's own, "3" included.
	wantLabels := [][2]string{{"2", "ii"}, {"3", "3"}, {"5", "12a"}}
	recs, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil || len(recs) != len(wantLabels)+1 || recs[0][1] != "page" || recs[0][len(recs[0])-1] != "page_label" {
		t.Fatalf("CSV download (%v):\n%s", err, csvText)
	}
	var js []struct {
		Page      int    `json:"page"`
		PageLabel string `json:"page_label"`
	}
	if err := json.Unmarshal([]byte(jsonText), &js); err != nil || len(js) != len(wantLabels) {
		t.Fatalf("JSON download (%v):\n%s", err, jsonText)
	}
	for i, w := range wantLabels {
		if r := recs[i+1]; r[1] != w[0] || r[len(r)-1] != w[1] {
			t.Errorf("CSV row %d %q, want page %s labelled %s", i+1, r, w[0], w[1])
		}
		if r := js[i]; strconv.Itoa(r.Page) != w[0] || r.PageLabel != w[1] {
			t.Errorf("JSON row %d %+v, want page %s labelled %s", i, r, w[0], w[1])
		}
	}

	// A malformed selection: the service's 422, in its words.
	var errText string
	err = chromedp.Run(ctx,
		chromedp.SetValue("#pages", "3-1"),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#error"),
		chromedp.Text("#error", &errText),
		chromedp.Evaluate(rows, &table),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errText, "Error 422") || !strings.Contains(errText, `pages "3-1": the range "3-1" runs backwards`) {
		t.Errorf("error shown %q", errText)
	}
	if len(table) != 1 || table[0][0] != "book.pdf" || table[0][1] != "" || !strings.HasPrefix(table[0][5], "Failed: Error 422") {
		t.Errorf("table after a malformed selection: %q", table)
	}

	// A three-page TIFF: the field shows again and selects its page 2 (a
	// TIFF has no page labels).
	err = chromedp.Run(ctx,
		chromedp.SetUploadFiles("#file", []string{img}),
		chromedp.WaitNotVisible("#pages-field"),
		chromedp.SetUploadFiles("#file", []string{tiff}),
		chromedp.WaitVisible("#pages-field"),
		classified("2"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 1 || table[0][0] != "scan.tif" || table[0][1] != "2" || modelmeta.CategoryIndex(table[0][2]) < 0 || !strings.Contains(status, "1 of 3 page(s)") {
		t.Errorf("TIFF with pages 2: status %q, table %q", status, table)
	}

	// An image: the field hides, and its value (still "3-1") is not sent.
	var errHidden bool
	err = chromedp.Run(ctx,
		chromedp.SetUploadFiles("#file", []string{img}),
		chromedp.WaitNotVisible("#pages-field"),
		classified("3-1"),
		chromedp.Evaluate(`document.querySelector('#error').hidden`, &errHidden),
		chromedp.Text("#error", &errText),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !errHidden || len(table) != 1 || table[0][1] != "1" || modelmeta.CategoryIndex(table[0][2]) < 0 {
		t.Errorf("image with the Pages field hidden: error hidden %v %q, table %q", errHidden, errText, table)
	}
}
