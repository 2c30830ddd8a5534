package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/modelmeta"
)

// TestFrontendDocuments: the web page sends a file to /predict_document by
// its content (documentKind: a PDF, or a TIFF of either byte order),
// whatever its name: a three-page TIFF gets a row and a card for each
// page, numbered, as does a PDF named report.bin; an image goes to
// /predict_image.
func TestFrontendDocuments(t *testing.T) {
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), nil, nil)
	samples := classifytest.Pages(t, 1)
	dir := t.TempDir()
	tiff := filepath.Join(dir, "scan.tif")
	pdf := filepath.Join(dir, "report.bin")
	if err := os.WriteFile(tiff, hostile.GrayTIFF(greyPage(t, samples[0]), greyPage(t, samples[7]), greyPage(t, samples[2])), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pdf, makePDF(2), 0o644); err != nil {
		t.Fatal(err)
	}

	// documentKind on first bytes, as JavaScript strings.
	kinds := []struct{ head, want string }{
		{`%PDF-1.7`, "pdf"}, {`II*\0`, "tiff"}, {`MM\0*`, "tiff"},
		{`\x89PNG\r\n`, ""}, {`\xff\xd8\xff\xe0`, ""}, {`RIFF`, ""},
		{`%PDF`, ""}, {`II*`, ""}, {`MM*\0`, ""}, {`II\0*`, ""}, {``, ""},
	}
	var js []string
	for _, k := range kinds {
		js = append(js, `documentKind(new Uint8Array([..."`+k.head+`"].map((c) => c.charCodeAt(0))))`)
	}
	var got []string
	var table [][]string
	var titles, thumbs []string
	var status, errText string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.Evaluate("["+strings.Join(js, ", ")+"]", &got),
		chromedp.SetUploadFiles("#file", []string{tiff, pdf, samples[7]}),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#batch"),
		chromedp.Text("#status", &status),
		chromedp.Evaluate(`document.querySelector('#error').hidden ? "" : document.querySelector('#error').textContent`, &errText),
		chromedp.Evaluate(`[...document.querySelectorAll('#table tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))`, &table),
		chromedp.Evaluate(`[...document.querySelectorAll('.page h2')].map(h => h.textContent)`, &titles),
		chromedp.Evaluate(`[...document.querySelectorAll('.page img')].map(i => i.src.slice(0, 23))`, &thumbs),
	)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range kinds {
		if i >= len(got) || got[i] != k.want {
			t.Errorf("documentKind(%q) = %q, want %q (all: %q)", k.head, got, k.want, got)
			break
		}
	}
	if errText != "" || !strings.Contains(status, "3 files: 6 page(s) classified") || !strings.Contains(status, "0 file(s) failed") {
		t.Errorf("status %q, error %q", status, errText)
	}
	img := filepath.Base(samples[7])
	want := [][2]string{{"scan.tif", "1"}, {"scan.tif", "2"}, {"scan.tif", "3"}, {"report.bin", "1"}, {"report.bin", "2"}, {img, "1"}}
	if len(table) != len(want) {
		t.Fatalf("%d table rows, want %d: %q", len(table), len(want), table)
	}
	for i, w := range want {
		if r := table[i]; r[0] != w[0] || r[1] != w[1] || modelmeta.CategoryIndex(r[2]) < 0 || strings.HasPrefix(r[5], "Failed") {
			t.Errorf("row %d: %q, want file %q page %q classified", i, r, w[0], w[1])
		}
	}
	wantTitles := []string{"scan.tif, page 1", "scan.tif, page 2", "scan.tif, page 3", "report.bin, page 1", "report.bin, page 2", img}
	if !slices.Equal(titles, wantTitles) {
		t.Errorf("cards %q, want %q", titles, wantTitles)
	}
	// The documents' cards show the service's thumbnails (a browser shows
	// no TIFF), the image's card the file itself.
	for i, th := range thumbs {
		if want := "data:image/jpeg;base64,"; i < 5 && th != want {
			t.Errorf("card %d: thumbnail %q, want a %s URL", i, th, want)
		}
	}
	if len(thumbs) != 6 || !strings.HasPrefix(thumbs[5], "blob:") {
		t.Errorf("thumbnails %q", thumbs)
	}
}
