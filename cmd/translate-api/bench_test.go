package main

import (
	"archivekit/internal/testenv"
	"bytes"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"archivekit/internal/translate/translator/translatortest"
)

// rssMiB is the resident set size of this process (the service runs in it).
func rssMiB(b *testing.B) float64 {
	kb, err := testenv.RSSKiB()
	if err != nil {
		b.Skip(err)
	}
	return float64(kb) / 1024
}

// BenchmarkTranslateSampleALTO: POST /translate of the 79-page sample ALTO
// (1.4 MB) with a stand-in hosted API answering instantly, then with 50 ms
// latency per call; reports seconds per request and the ratio.
func BenchmarkTranslateSampleALTO(b *testing.B) {
	alto := readFile(b, sharedData(b, "translator/alto/MTX201501307_anon.alto.xml"))
	body, ct := multipartBody(b, part{Field: "file", Name: "MTX201501307_anon.alto.xml", File: true, Data: alto},
		part{Field: "source_lang", Data: []byte("cs")})
	payload := body.Bytes()
	run := func(delay time.Duration) float64 {
		mt := translatortest.New(translatortest.Config{Delay: delay})
		defer mt.Close()
		_, ts := startServer(b, testEnv(mt.URL, nil))
		start := time.Now()
		resp, err := http.Post(ts.URL+"/translate", ct, bytes.NewReader(payload))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(start).Seconds()
	}
	var instant, slow float64
	for n := 0; n < b.N; n++ {
		instant += run(0)
		slow += run(50 * time.Millisecond)
	}
	b.ReportMetric(instant/float64(b.N), "s/request-instant")
	b.ReportMetric(slow/float64(b.N), "s/request-50ms")
	b.ReportMetric(slow/instant, "50ms/instant")
}

// BenchmarkMemory: resident memory of the service (in this process) after
// warm-up and after 10,000 requests translating a small ALTO page.
func BenchmarkMemory(b *testing.B) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(b, testEnv(mt.URL, nil))
	small := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1" WIDTH="100" HEIGHT="100"><PrintSpace>
<TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="archeologický" HPOS="1" VPOS="1" WIDTH="10" HEIGHT="5"/><SP/><String CONTENT="výzkum" HPOS="12" VPOS="1" WIDTH="10" HEIGHT="5"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>`)
	body, ct := multipartBody(b, part{Field: "file", Name: "p.alto.xml", File: true, Data: small}, part{Field: "source_lang", Data: []byte("cs")})
	payload := body.Bytes()
	runtime.GC()
	b.ReportMetric(rssMiB(b), "rss-warm-MiB")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= 10000 {
				resp, err := client.Post(ts.URL+"/translate", ct, bytes.NewReader(payload))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	runtime.GC()
	b.ReportMetric(rssMiB(b), "rss-10k-MiB")
}
