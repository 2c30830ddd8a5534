package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/book"
	"archivekit/internal/book/booktest"
	"archivekit/internal/pageclass/classify/classifytest"
)

// /predict_document classifies a IIIF manifest named by the book field:
// with BOOK_HOSTS naming the loopback test server, every page's image is
// fetched once, as its service's level allows, and the pages come back in
// canvas order with their canvas ids and labels; the pages field selects by
// position and MAX_PDF_PAGES bounds them. Without BOOK_HOSTS a loopback
// book is refused (the default refuses private ranges), and with another
// host listed nothing is fetched; a file and a book together, and a book
// sent to /predict_image, are refused.
func TestPredictDocumentBook(t *testing.T) {
	book := booktest.New(t, classifytest.Pages(t, 1), 5, true)
	host := must(url.Parse(book.URL)).Host
	field := func(k, v string) upload { return upload{Field: k, Data: []byte(v)} }
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", EnvBookHosts: host, EnvMaxPDFPages: "4"}, nil)

	status, body := postForm(t, ts.URL+"/predict_document", field("book", book.ManifestURL()), field("pages", "1-4"))
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var resp struct {
		Type      string `json:"type"`
		PageCount int    `json:"page_count"`
		Pages     []struct {
			Page        int    `json:"page"`
			ID          string `json:"id"`
			Label       string `json:"label"`
			Predictions []any  `json:"predictions"`
		} `json:"pages"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Type != "document" || resp.PageCount != 5 || len(resp.Pages) != 4 {
		t.Fatalf("answer %s", body)
	}
	for i, p := range resp.Pages {
		if p.Page != i+1 || p.ID != fmt.Sprintf("%s/iiif/book/canvas/p%d", book.URL, i+1) || p.Label != fmt.Sprintf("f. %d", i+1) || len(p.Predictions) == 0 {
			t.Errorf("page %d: %+v", i+1, p)
		}
	}
	servedOnce(t, book, 4)

	// A page whose image is gone is skipped with its canvas's id and label
	// (the label was missing).
	book.Gone(1)
	status, body = postForm(t, ts.URL+"/predict_document", field("book", book.ManifestURL()), field("pages", "1-3"))
	var skipped struct {
		Skipped []struct {
			Page  int    `json:"page"`
			ID    string `json:"id"`
			Label string `json:"label"`
			Error string `json:"error"`
		} `json:"skipped"`
	}
	if status != 200 || json.Unmarshal(body, &skipped) != nil || len(skipped.Skipped) != 1 ||
		skipped.Skipped[0].Page != 2 || skipped.Skipped[0].Label != "f. 2" || !strings.Contains(skipped.Skipped[0].Error, "404") {
		t.Errorf("a page gone: %d %s", status, body)
	}

	book.Reset()
	if status, body := postForm(t, ts.URL+"/predict_document", field("book", book.ManifestURL())); status != 413 || !strings.Contains(string(body), "MAX_PDF_PAGES") {
		t.Errorf("5 pages over MAX_PDF_PAGES 4: status %d: %s", status, body)
	}
	if status, body := postForm(t, ts.URL+"/predict_image", field("book", book.ManifestURL())); status != 422 || !strings.Contains(string(body), "/predict_document") {
		t.Errorf("book to /predict_image: status %d: %s", status, body)
	}
	if status, body := postForm(t, ts.URL+"/predict_document", field("book", book.ManifestURL()),
		upload{Field: "file", Name: "a.pdf", CType: "application/pdf", Data: makePDF(1)}); status != 422 || !strings.Contains(string(body), "not both") {
		t.Errorf("file and book: status %d: %s", status, body)
	}
	if status, body := postForm(t, ts.URL+"/predict_document", field("book", "file:///etc/passwd")); status != 422 || !strings.Contains(string(body), "http(s) URL") {
		t.Errorf("file:// book: status %d: %s", status, body)
	}

	// A refusal names the host refused and the variable that allows it;
	// translate-api's old name BOOK_ALLOW_HOSTS allows it too.
	for _, tc := range []struct {
		name   string
		env    map[string]string
		status int
		want   string
	}{
		{"default", map[string]string{"LOG_LEVEL": "WARNING"}, 422, "host " + host + " refused: it is at a loopback, private or link-local address; list it in BOOK_HOSTS"},
		{"other host", map[string]string{"LOG_LEVEL": "WARNING", EnvBookHosts: "iiif.example.org"}, 422, "host " + host + " refused: it is not in BOOK_HOSTS"},
		{"old name", map[string]string{"LOG_LEVEL": "WARNING", "BOOK_ALLOW_HOSTS": host}, 200, `"page_count":5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			book.Reset()
			_, ts := startServer(t, testOptions(t), tc.env, nil)
			status, body := postForm(t, ts.URL+"/predict_document", field("book", book.ManifestURL()))
			if status != tc.status || !strings.Contains(string(body), tc.want) {
				t.Errorf("status %d, want %d with %q: %s", status, tc.status, tc.want, body)
			}
			if status == 200 {
				return
			}
			if log, _, _, _ := book.Served(); len(log) != 0 {
				t.Errorf("requests %v, want none", log)
			}
		})
	}
}

// servedOnce checks that the book's server was asked for the manifest and
// the images of n pages, each once, and refused nothing.
func servedOnce(t *testing.T, book *booktest.Server, n int) {
	t.Helper()
	log, denied, _, _ := book.Served()
	if len(denied) > 0 || len(log) != n+1 {
		t.Errorf("requests %v (denied %v), want the manifest and %d images", log, denied, n)
	}
	for p, n := range book.Requests() {
		if n != 1 {
			t.Errorf("%s requested %d times", p, n)
		}
	}
}

// TestPredictDocumentBookProblems: /predict_document says what the reader
// said of the book (a canvas without an image here) in book_problems, as
// pageclass warns of it (it said nothing).
func TestPredictDocumentBookProblems(t *testing.T) {
	bk := booktest.New(t, classifytest.Pages(t, 1), 3, true)
	bk.NoImage(1)
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", EnvBookHosts: must(url.Parse(bk.URL)).Host}, nil)
	status, body := postForm(t, ts.URL+"/predict_document", upload{Field: "book", Data: []byte(bk.ManifestURL())})
	var resp struct {
		BookProblems []string `json:"book_problems"`
	}
	if status != 200 || json.Unmarshal(body, &resp) != nil {
		t.Fatalf("%d %s", status, body)
	}
	if want := bk.URL + "/iiif/book/canvas/p2: no image"; len(resp.BookProblems) != 1 || resp.BookProblems[0] != want {
		t.Errorf("book_problems %q, want [%q]", resp.BookProblems, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestBookFetchWorkers: /predict_document fetches BOOK_FETCH_WORKERS pages
// of a book at once (the image server sees exactly that many requests in
// flight), each once, and answers the pages in book order; a
// BOOK_FETCH_WORKERS of 0 stops the service at configuration.
func TestBookFetchWorkers(t *testing.T) {
	const workers = 3
	book := booktest.New(t, classifytest.Pages(t, 1), 8, true)
	gate := booktest.NewGate(workers)
	book.SetHold(gate.Enter)
	host := must(url.Parse(book.URL)).Host
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", EnvBookHosts: host, EnvBookFetchWorkers: fmt.Sprint(workers)}, nil)
	status, body := postForm(t, ts.URL+"/predict_document", upload{Field: "book", Data: []byte(book.ManifestURL())})
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var resp struct {
		Pages []struct {
			Page int    `json:"page"`
			ID   string `json:"id"`
		} `json:"pages"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range resp.Pages {
		got = append(got, fmt.Sprintf("%d:%s", p.Page, strings.TrimPrefix(p.ID, book.URL)))
	}
	want := []string{"1:/iiif/book/canvas/p1", "2:/iiif/book/canvas/p2", "3:/iiif/book/canvas/p3", "4:/iiif/book/canvas/p4",
		"5:/iiif/book/canvas/p5", "6:/iiif/book/canvas/p6", "7:/iiif/book/canvas/p7", "8:/iiif/book/canvas/p8"}
	if !slices.Equal(got, want) {
		t.Errorf("pages %q, want %q", got, want)
	}
	if most := gate.Most(); most != workers {
		t.Errorf("%d image requests in flight at most, want %d", most, workers)
	}
	servedOnce(t, book, 8)

	_, err := newServer(testOptions(t), func(k string) (string, bool) {
		if k == EnvBookFetchWorkers {
			return "0", true
		}
		return "", false
	}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), EnvBookFetchWorkers) {
		t.Errorf("%s=0: %v, want an error naming it", EnvBookFetchWorkers, err)
	}
}

// TestNoImageReason: a book job's page without an image is skipped saying
// so, with what the reader said of that page beyond it (not of others).
func TestNoImageReason(t *testing.T) {
	for _, c := range []struct {
		name     string
		problems []book.Problem
		want     string
	}{
		{"canvas", []book.Problem{{Page: "c2", Reason: "no image"}}, "no image file for this page"},
		{"METS", []book.Problem{{Page: "P1", Reason: "no image in fileGrp DEFAULT"}, {Page: "c2", Reason: "no image in fileGrp DEFAULT"},
			{Page: "c2", File: "F9", Reason: "file pointer to no file"}}, "no image file for this page; no image in fileGrp DEFAULT; F9: file pointer to no file"},
	} {
		b := &book.Book{Problems: c.problems}
		if got := noImage(b, book.Page{ID: "c2"}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A book that cannot be fetched is answered naming the URL the client sent,
// not the addresses the service reached or asked (it named "dial tcp
// 127.0.0.1:PORT" and its resolver's address): as translate-api and the
// jobs say it (service.BookReadError).
func TestBookErrorNamesNoAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	host, port, _ := net.SplitHostPort(addr)
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", EnvBookHosts: "localhost:" + port}, nil)
	bookURL := "http://localhost:" + port + "/manifest.json"
	status, body := postForm(t, ts.URL+"/predict_document", upload{Field: "book", Data: []byte(bookURL)})
	_, detail, _ := strings.Cut(string(body), "cannot be read:")
	if status != 422 || !strings.Contains(string(body), bookURL) || detail == "" || strings.Contains(detail, host) || strings.Contains(detail, port) {
		t.Errorf("status %d: %s", status, body)
	}
}
