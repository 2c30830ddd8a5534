package translator

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"archivekit/internal/translate/lemmatizer"
	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/transport"
	"archivekit/internal/translate/vocab"
)

const czechModel = "czech-pdt-ud-2.15-241121"

// lemmaRun is one document translated with the shared vocabulary.
type lemmaRun struct {
	out      *Output
	requests int32 // lemmatiser requests it cost
}

// translateWithLemmas translates the 15 records and, withALTO, the
// 79-page ALTO (dual-pass, as the command does) with the shared
// vocabulary, the lemmatiser lem (its stand-in srv counts the requests)
// and a fresh mtapi stand-in per document, keyed by file name.
func translateWithLemmas(t *testing.T, v *vocab.Vocabulary, lem vocab.Lemmatizer, srv *lemmatizertest.Server, withALTO bool) map[string]lemmaRun {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(sharedPath(t, "records"), "*.xml"))
	if len(names) != 15 {
		t.Fatalf("%d records, want 15", len(names))
	}
	if withALTO {
		names = append(names, sharedPath(t, "alto/MTX201501307_anon.alto.xml"))
	}
	fields := loadFields(t)
	runs := map[string]lemmaRun{}
	for _, path := range names {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		be, _ := newMT(t, translatortest.Config{})
		before := srv.Requests.Load()
		out, err := Translate(context.Background(), src, filepath.Base(path), Options{Backend: be, Source: "cs", Target: "en",
			Fields: fields, Vocabulary: v, Lemmatizer: lem})
		if err != nil {
			t.Fatal(err)
		}
		runs[filepath.Base(path)] = lemmaRun{out, srv.Requests.Load() - before}
	}
	return runs
}

// TestBatchedLemmasSameOutput: lemmatising a page's (a record's) lines in
// one request through the run's cache (lemmatizer.Cache, as the session
// sets it up) protects the same terms and writes the same bytes, log and
// warnings as lemmatising each text on its own (the lemmatiser as it was
// set up before), on the 15 records and the 79-page ALTO; the ALTO costs
// at most two lemmatiser requests per page with text instead of one per
// line, a record at most one.
func TestBatchedLemmasSameOutput(t *testing.T) {
	v, err := vocab.Load(sharedPath(t, "vocabulary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	start := func() (*lemmatizertest.Server, *lemmatizer.Client) {
		srv := lemmatizertest.New(lemmatizertest.CzechLexicon, czechModel)
		t.Cleanup(srv.Close)
		return srv, lemmatizer.New(srv.URL, transport.New(transport.Policy{}, nil))
	}
	oldSrv, oldClient := start()
	newSrv, newClient := start()
	old := translateWithLemmas(t, v, &lemmatizer.Breaker{Inner: oldClient}, oldSrv, true)
	cache := lemmatizer.NewCache(&lemmatizer.Breaker{Inner: newClient})
	batched := translateWithLemmas(t, v, cache, newSrv, true)

	protected := 0
	for name, o := range old {
		n := batched[name]
		if string(n.out.Data) != string(o.out.Data) {
			t.Errorf("%s: output bytes differ", name)
		}
		if !reflect.DeepEqual(n.out.Log, o.out.Log) {
			t.Errorf("%s: log differs", name)
		}
		if n.out.Stats != o.out.Stats || !reflect.DeepEqual(n.out.Terms, o.out.Terms) {
			t.Errorf("%s: stats %+v terms %+v, before %+v %+v", name, n.out.Stats, n.out.Terms, o.out.Stats, o.out.Terms)
		}
		if !reflect.DeepEqual(n.out.Warnings, o.out.Warnings) || !reflect.DeepEqual(n.out.Components, o.out.Components) {
			t.Errorf("%s: warnings %q components %v, before %q %v", name, n.out.Warnings, n.out.Components, o.out.Warnings, o.out.Components)
		}
		protected += n.out.Stats.ProtectedTerms
		limit := int32(1)
		if n.out.Kind == KindALTO {
			limit = int32(2 * pagesWithText(readShared(t, "alto/MTX201501307_anon.alto.xml")))
		}
		if n.requests > limit {
			t.Errorf("%s: %d lemmatiser requests, want at most %d", name, n.requests, limit)
		}
		t.Logf("%s: %d protected terms; lemmatiser requests %d, before %d", name, n.out.Stats.ProtectedTerms, n.requests, o.requests)
	}
	if protected == 0 {
		t.Error("no term was protected")
	}
	if cache.Len() == 0 {
		t.Error("nothing was cached")
	}
}

// TestBatchedLemmasFailingLemmatiser: a lemmatiser that always fails costs
// no more requests than before and degrades the same way on the 15
// records: the vocabulary's single words are not protected, with a
// warning, and the output is what it was.
func TestBatchedLemmasFailingLemmatiser(t *testing.T) {
	v, err := vocab.Load(sharedPath(t, "vocabulary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	start := func() (*lemmatizertest.Server, *lemmatizer.Client) {
		srv := lemmatizertest.Start(lemmatizertest.Config{Models: []string{czechModel}, FailAlways: 503})
		t.Cleanup(srv.Close)
		return srv, lemmatizer.New(srv.URL, transport.New(transport.Policy{MaxRetries: 1, BackoffBase: time.Millisecond}, nil))
	}
	oldSrv, oldClient := start()
	newSrv, newClient := start()
	old := translateWithLemmas(t, v, &lemmatizer.Breaker{Inner: oldClient}, oldSrv, false)
	batched := translateWithLemmas(t, v, lemmatizer.NewCache(&lemmatizer.Breaker{Inner: newClient}), newSrv, false)
	warned := false
	for name, o := range old {
		n := batched[name]
		if string(n.out.Data) != string(o.out.Data) || n.out.Stats.ProtectedTerms != o.out.Stats.ProtectedTerms {
			t.Errorf("%s: output differs (%d protected terms, before %d)", name, n.out.Stats.ProtectedTerms, o.out.Stats.ProtectedTerms)
		}
		for _, w := range n.out.Warnings {
			warned = warned || strings.Contains(w, "lemmatiser failed, single-word terms not protected")
		}
	}
	if !warned {
		t.Error("no warning about the failing lemmatiser")
	}
	if n, o := newSrv.Requests.Load(), oldSrv.Requests.Load(); n > o || n == 0 {
		t.Errorf("%d lemmatiser requests, before %d", n, o)
	} else {
		t.Logf("%d lemmatiser requests (retries included), before %d", n, o)
	}
}
