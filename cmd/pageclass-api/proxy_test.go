package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"archivekit/internal/jobs"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/service/servicetest"
)

// jobsServer starts the service with jobs (JOBS_DIR) and, when root is not
// "", ROOT_PATH=root; its queue is closed before its models.
func jobsServer(t *testing.T, root string) (*server, *httptest.Server) {
	t.Helper()
	env := map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir()}
	if root != "" {
		env["ROOT_PATH"] = root
	}
	s, ts := startServer(t, testOptions(t), env, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) })
	return s, ts
}

// TestFrontendBehindProxyPath: the browser page works published under a
// reverse proxy's path, its prefix stripped (it asked for /frontend/app.js,
// /info and /jobs at the host's root, outside the proxy's path, and showed
// nothing), with ROOT_PATH set (the job links the service gives carry the
// path) and without (the page adds it).
func TestFrontendBehindProxyPath(t *testing.T) {
	for _, root := range []string{"", "/pageclass"} {
		t.Run("ROOT_PATH="+root, func(t *testing.T) {
			ctx := chromium(t)
			_, ts := jobsServer(t, root)
			base, stray := servicetest.BehindProxy(t, ts.URL, "/pageclass")
			pages := classifytest.Pages(t, 1)
			var hash, status string
			var table, again [][]string
			var thumbs []string
			err := chromedp.Run(ctx,
				submitted(base, []string{pages[0], pages[7]}, &hash, &status, &table),
				// opened again from the recent jobs: the job's links
				chromedp.Navigate("about:blank"),
				chromedp.Navigate(base+"/frontend"),
				chromedp.WaitVisible("#recent-jobs"),
				chromedp.Click("#recent-list a"),
				chromedp.WaitVisible(endedDownloads, chromedp.ByQuery),
				chromedp.Evaluate(tableRows, &again),
				chromedp.Evaluate(`[...document.querySelectorAll('#results .page img')].map(i => i.src.split(':')[0])`, &thumbs),
			)
			if err != nil {
				t.Fatalf("%v (requests outside the proxy's path: %q)", err, stray())
			}
			if !strings.Contains(status, "succeeded: 2 files: 2 page(s) classified") || len(table) != 2 || len(again) != 2 {
				t.Errorf("status %q, %d rows, %d rows opened again", status, len(table), len(again))
			}
			if len(thumbs) != 2 || thumbs[0] != "data" || thumbs[1] != "data" {
				t.Errorf("thumbnails of the job opened again: %q", thumbs)
			}
			if got := stray(); len(got) > 0 {
				t.Errorf("the page asked for %q, outside the proxy's path", got)
			}
		})
	}
}

// TestJobLinksBehindProxyPath: with ROOT_PATH, every link a job's answers
// give (Location, results, an item's answer, the archive, the next page of
// jobs) and the OpenAPI document's server work through a proxy that
// publishes the service under that path; the pages' own links and
// redirects stay under it too.
func TestJobLinksBehindProxyPath(t *testing.T) {
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), "ROOT_PATH": "/pageclass/"}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) })
	base, stray := servicetest.BehindProxy(t, ts.URL, "/pageclass")
	host := strings.TrimSuffix(base, "/pageclass")
	get := func(path string) (*http.Response, []byte) {
		t.Helper()
		r, err := http.Get(host + path)
		if err != nil {
			t.Fatal(err)
		}
		return r, servicetest.ReadBody(t, r)
	}
	page := classifytest.Pages(t, 1)[7]
	body, ctype := servicetest.Multipart(t, upload{Field: "file", Name: "a.png", CType: "image/png", Data: must(os.ReadFile(page))}, upload{Field: "file", Name: "b.png", CType: "image/png", Data: must(os.ReadFile(page))})
	resp, err := http.Post(base+"/jobs", ctype, body)
	if err != nil {
		t.Fatal(err)
	}
	var st jobs.Status
	if b := servicetest.ReadBody(t, resp); resp.StatusCode != 202 || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	loc := resp.Header.Get("Location")
	if loc != "/pageclass/jobs/"+st.ID || st.Results != "/pageclass/jobs/"+st.ID+"/results" {
		t.Fatalf("Location %q, results %q; want them under /pageclass", loc, st.Results)
	}
	waitJob(t, s, ts.URL, st)
	// A second job, so that the list of one job a page has a next page.
	body, ctype = servicetest.Multipart(t, upload{Field: "file", Name: "c.png", CType: "image/png", Data: must(os.ReadFile(page))})
	if resp, err := http.Post(base+"/jobs", ctype, body); err != nil || resp.StatusCode != 202 {
		t.Fatalf("second POST /jobs: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	if r, b := get(loc); r.StatusCode != 200 {
		t.Errorf("GET %s: %d %s", loc, r.StatusCode, b)
	}
	r, b := get(st.Results)
	var res jobs.Results
	if r.StatusCode != 200 || json.Unmarshal(b, &res) != nil || len(res.Items) != 2 {
		t.Fatalf("GET %s: %d %s", st.Results, r.StatusCode, b)
	}
	for _, link := range []string{res.Items[1].URL, res.Items[1].URL + "/thumbnail", res.ROCrate} {
		if r, b := get(link); r.StatusCode != 200 {
			t.Errorf("GET %s: %d %.200s", link, r.StatusCode, b)
		}
	}
	var list struct {
		Next string `json:"next"`
	}
	if r, b := get("/pageclass/jobs?limit=1"); r.StatusCode != 200 || json.Unmarshal(b, &list) != nil || !strings.HasPrefix(list.Next, "/pageclass/jobs?") {
		t.Errorf("GET /jobs?limit=1: %d, next %q", r.StatusCode, list.Next)
	}
	// The document names the path as its server (none: "/", outside it).
	var doc struct {
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
	}
	if r, b := get("/pageclass/openapi.json"); r.StatusCode != 200 || json.Unmarshal(b, &doc) != nil || len(doc.Servers) != 1 || doc.Servers[0].URL != "/pageclass" {
		t.Errorf("openapi.json servers %+v", doc.Servers)
	}
	// A trailing slash goes back under the path, not to the host's root.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, want := range map[string]string{"/pageclass/docs/": "/pageclass/docs", "/pageclass/frontend/": "/pageclass/frontend",
		"/pageclass/frontend/index.html": "/pageclass/frontend", "/pageclass/docs/../info": "/pageclass/info"} {
		r, err := noFollow.Get(host + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if u, err := r.Location(); err != nil || r.StatusCode/100 != 3 || u.Path != want {
			t.Errorf("GET %s: %d to %v (%v), want %s", path, r.StatusCode, u, err, want)
		}
	}
	// The welcome a program gets at the root names /info under the path.
	var welcome struct {
		Info string `json:"info"`
	}
	if r, b := get("/pageclass/"); r.StatusCode != 200 || json.Unmarshal(b, &welcome) != nil || welcome.Info != "/pageclass/info" {
		t.Errorf("GET /pageclass/: %d, info %q; want /pageclass/info", r.StatusCode, welcome.Info)
	}
	// The page a browser gets at the root links within the path.
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.Header.Set("Accept", "text/html")
	r, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	index := string(servicetest.ReadBody(t, r))
	for _, l := range []string{`href="docs"`, `href="frontend"`, `href="docs/docs.css"`} {
		if !strings.Contains(index, l) {
			t.Errorf("the root page lacks %s:\n%s", l, index)
		}
	}
	if got := stray(); len(got) > 0 {
		t.Errorf("requests outside the proxy's path: %q", got)
	}
}

// TestFrontendSlashWithToken: /frontend/ leads to the page without the
// token, as /frontend and its files load (it answered 401).
func TestFrontendSlashWithToken(t *testing.T) {
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "API_TOKEN": "s3cret-token-of-the-test"}, nil)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noFollow.Get(ts.URL + "/frontend/")
	if err != nil {
		t.Fatal(err)
	}
	servicetest.ReadBody(t, r)
	if r.StatusCode != http.StatusMovedPermanently || r.Header.Get("Location") != "../frontend" {
		t.Errorf("GET /frontend/ without the token: %d to %q, want 301 to ../frontend", r.StatusCode, r.Header.Get("Location"))
	}
}
