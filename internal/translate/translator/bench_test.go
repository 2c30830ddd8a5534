package translator

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"archivekit/internal/translate/lemmatizer"
	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/transport"
	"archivekit/internal/translate/vocab"
)

// instant is an in-process backend that answers at once with the
// stand-in's translation.
type instant struct{ calls atomic.Int64 }

func (b *instant) Name() string                                        { return "instant" }
func (b *instant) Close() error                                        { return nil }
func (b *instant) Supports(ctx context.Context, src, tgt string) error { return nil }
func (b *instant) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	b.calls.Add(1)
	return translatortest.Translate(text), nil
}

// BenchmarkALTOLocal is the local processing cost of the real 79-page
// sample (parse, gather, batch, align, splice) with a backend that answers
// instantly: ms per MB of ALTO, and backend calls per page with text.
func BenchmarkALTOLocal(b *testing.B) {
	src := readShared(b, "alto/MTX201501307_anon.alto.xml")
	for _, fast := range []bool{false, true} {
		name := "dual-pass"
		if fast {
			name = "fast-align"
		}
		b.Run(name, func(b *testing.B) {
			be := &instant{}
			b.SetBytes(int64(len(src)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Translate(context.Background(), src, "s.alto.xml", Options{Backend: be, Source: "cs", FastAlign: fast, Concurrency: 1}); err != nil {
					b.Fatal(err)
				}
			}
			mb := float64(len(src)) / (1 << 20)
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/mb, "ms/MB")
			b.ReportMetric(float64(be.calls.Load())/float64(b.N)/float64(pagesWithText(src)), "calls/page")
		})
	}
}

// BenchmarkALTOLatency is the wall time of the 79-page sample through the
// mtapi client against the local stand-in answering each request after
// 50 ms, pages one at a time and DefaultConcurrency at a time; the speed-up
// is reported as a ratio.
func BenchmarkALTOLatency(b *testing.B) {
	src := readShared(b, "alto/MTX201501307_anon.alto.xml")
	srv := translatortest.New(translatortest.Config{Delay: 50 * time.Millisecond})
	defer srv.Close()
	be := mtapi.New(mtapi.Config{BaseURL: srv.URL, Policy: transport.Policy{MaxRetries: 2, BackoffBase: time.Millisecond}})
	timeOne := func(conc int) time.Duration {
		t0 := time.Now()
		if _, err := Translate(context.Background(), src, "s.alto.xml", Options{Backend: be, Source: "cs", Concurrency: conc}); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	b.ResetTimer()
	var serial, conc time.Duration
	for i := 0; i < b.N; i++ {
		serial += timeOne(1)
		conc += timeOne(DefaultConcurrency)
	}
	n := float64(b.N)
	b.ReportMetric(serial.Seconds()/n, "s-serial")
	b.ReportMetric(conc.Seconds()/n, "s-concurrent")
	b.ReportMetric(serial.Seconds()/conc.Seconds(), "speedup")
	b.ReportMetric(float64(srv.Posts.Load())/n/2/float64(pagesWithText(src)), "requests/page")
}

// BenchmarkALTOVocabularyLatency is the wall time of the 79-page sample
// through the mtapi client with and without the shared vocabulary, both
// services stand-ins answering each request after 50 ms, the lemmatiser
// set up as the session does (a per-run lemmatizer.Cache in front of a
// circuit breaker): the cost of the vocabulary as a ratio of the two
// times measured in the same run, and lemmatiser requests per page with
// text. Each iteration starts with an empty cache.
func BenchmarkALTOVocabularyLatency(b *testing.B) {
	src := readShared(b, "alto/MTX201501307_anon.alto.xml")
	v, err := vocab.Load(sharedPath(b, "vocabulary.csv"))
	if err != nil {
		b.Fatal(err)
	}
	mt := translatortest.New(translatortest.Config{Delay: 50 * time.Millisecond})
	defer mt.Close()
	lem := lemmatizertest.Start(lemmatizertest.Config{Lexicon: lemmatizertest.CzechLexicon, Models: []string{czechModel}, Delay: 50 * time.Millisecond})
	defer lem.Close()
	be := mtapi.New(mtapi.Config{BaseURL: mt.URL, Policy: transport.Policy{MaxRetries: 2, BackoffBase: time.Millisecond}})
	timeOne := func(opt Options) time.Duration {
		opt.Backend, opt.Source = be, "cs"
		t0 := time.Now()
		if _, err := Translate(context.Background(), src, "s.alto.xml", opt); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	b.ResetTimer()
	var without, with time.Duration
	for i := 0; i < b.N; i++ {
		without += timeOne(Options{})
		client := lemmatizer.New(lem.URL, transport.New(lemmatizer.DefaultPolicy, nil))
		with += timeOne(Options{Vocabulary: v, Lemmatizer: lemmatizer.NewCache(&lemmatizer.Breaker{Inner: client})})
	}
	n := float64(b.N)
	b.ReportMetric(without.Seconds()/n, "s-without-vocab")
	b.ReportMetric(with.Seconds()/n, "s-with-vocab")
	b.ReportMetric(with.Seconds()/without.Seconds(), "vocab-ratio")
	b.ReportMetric(float64(lem.Requests.Load())/n/float64(pagesWithText(src)), "lemmatiser-requests/page")
}
