package book

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/fetch"
)

// TestPrefetchTexts: with Fetchers 4, a remote METS file's text files are
// fetched four at once while the book is read (the server holds each
// request until four are in flight), each once, a missing one failing as
// it does one at a time; the book read is the same as with the files
// fetched one after another. Before, Read fetched them one by one as it
// walked the pages: a 500-page book waited for 500 requests in a row.
func TestPrefetchTexts(t *testing.T) {
	const pages = 9
	var mets strings.Builder
	mets.WriteString(`<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink"><mets:fileSec><mets:fileGrp USE="FULLTEXT">`)
	for k := 1; k <= pages; k++ {
		fmt.Fprintf(&mets, `<mets:file ID="t%[1]d" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="ocr/%[1]d.xml"/></mets:file>`, k)
	}
	mets.WriteString(`</mets:fileGrp></mets:fileSec><mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence">`)
	for k := 1; k <= pages; k++ {
		fmt.Fprintf(&mets, `<mets:div ID="P%[1]d" TYPE="page" ORDER="%[1]d"><mets:fptr FILEID="t%[1]d"/></mets:div>`, k)
	}
	mets.WriteString(`</mets:div></mets:structMap></mets:mets>`)

	var (
		mu             sync.Mutex
		requests       = map[string]int{}
		inFlight, most int
		hold           bool
		four           = make(chan struct{})
		fourOnce       sync.Once
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/b/mets.xml" {
			w.Write([]byte(mets.String()))
			return
		}
		mu.Lock()
		requests[r.URL.Path]++
		inFlight++
		most = max(most, inFlight)
		if inFlight >= 4 {
			fourOnce.Do(func() { close(four) })
		}
		held := hold
		mu.Unlock()
		if held {
			select { // until four are in flight (5 s at most: a failure's bound)
			case <-four:
			case <-time.After(5 * time.Second):
			}
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		if r.URL.Path == "/b/ocr/5.xml" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p%s"/></Layout></alto>`, strings.TrimSuffix(r.URL.Path[len("/b/ocr/"):], ".xml"))
	}))
	defer srv.Close()
	read := func(fetchers int) *Book {
		t.Helper()
		f := fetch.New(fetch.Policy{Private: fetch.PrivateAllowed, Retries: -1}, nil)
		b, err := Read(context.Background(), srv.URL+"/b/mets.xml", Options{Fetcher: f, Fetchers: fetchers})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one := read(1)
	mu.Lock()
	requests, most, hold = map[string]int{}, 0, true
	mu.Unlock()
	four4 := read(4)
	mu.Lock()
	defer mu.Unlock()
	if most != 4 {
		t.Errorf("%d text files fetched at once at most, want 4", most)
	}
	for k := 1; k <= pages; k++ {
		if n := requests[fmt.Sprintf("/b/ocr/%d.xml", k)]; n != 1 {
			t.Errorf("page %d's text file requested %d times, want once", k, n)
		}
	}
	for _, b := range []*Book{one, four4} {
		for i := range b.Problems {
			b.Problems[i].Err = nil // errors compared by their reasons
		}
	}
	if !reflect.DeepEqual(one, four4) {
		t.Errorf("the book read with 4 fetchers differs from the one read with 1:\n%+v\n%+v", four4, one)
	}
	if len(one.Pages) != pages || len(one.Pages[4].Texts) != 0 || len(one.Problems) == 0 {
		t.Errorf("the book: %d pages, page 5 with %d texts, problems %v; want page 5's missing file a problem", len(one.Pages), len(one.Pages[4].Texts), one.Problems)
	}
}
