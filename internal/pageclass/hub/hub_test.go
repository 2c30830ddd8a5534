package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHub serves {repo}/resolve/{revision}/{file} from memory, like a hub.
type fakeHub struct {
	mu       sync.Mutex
	files    map[string][]byte // "org/model/v4.4/model.pt"
	token    string            // required bearer token, if set
	forbid   string            // repo answered with 403
	cutOnce  map[string]bool   // paths whose next response is cut halfway
	requests []*http.Request
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, r.Clone(context.Background()))
	h.mu.Unlock()
	repo, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/resolve/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if h.token != "" && r.Header.Get("Authorization") != "Bearer "+h.token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if repo == h.forbid {
		http.Error(w, "gated", http.StatusForbidden)
		return
	}
	key := repo + "/" + rest
	h.mu.Lock()
	data, found := h.files[key]
	cut := h.cutOnce[key]
	delete(h.cutOnce, key)
	h.mu.Unlock()
	if !found {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("ETag", fmt.Sprintf(`"%x-%d"`, data[0], len(data)))
	if cut && r.Header.Get("Range") == "" {
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.WriteHeader(http.StatusOK)
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drop the connection mid-body
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

func (h *fakeHub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.requests)
}

func (h *fakeHub) last() *http.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests[len(h.requests)-1]
}

func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31) ^ seed
	}
	return b
}

func setup(t *testing.T) (*fakeHub, *httptest.Server, *Client, *bytes.Buffer) {
	t.Helper()
	h := &fakeHub{files: map[string][]byte{
		"org/model/v4.4/model.pt":       payload(100_000, 1),
		"org/model/v4.4/meta/info.json": []byte(`{"labels":["DRAW"]}`),
		"org/model/main/model.pt":       payload(5_000, 2),
	}, cutOnce: map[string]bool{}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	var logs bytes.Buffer
	c := &Client{Endpoint: srv.URL, Home: t.TempDir(), Log: slog.New(slog.NewTextHandler(&logs, nil))}
	return h, srv, c, &logs
}

func checkFile(t *testing.T, c *Client, repo, rev, file string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(c.Path(repo, rev, file))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the %d served", file, len(got), len(want))
	}
}

func TestTokenAndLayout(t *testing.T) {
	h, _, c, _ := setup(t)
	h.token = "s3cret"
	c.Token = "s3cret"
	dir, err := c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt", "meta/info.json"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(c.Home, "org--model", "v4.4"); dir != want {
		t.Errorf("dir = %s, want %s", dir, want)
	}
	checkFile(t, c, "org/model", "v4.4", "model.pt", h.files["org/model/v4.4/model.pt"])
	checkFile(t, c, "org/model", "v4.4", "meta/info.json", h.files["org/model/v4.4/meta/info.json"])
	for _, r := range h.requests {
		if got := r.Header.Get("Authorization"); got != "Bearer s3cret" {
			t.Errorf("%s sent Authorization %q", r.URL.Path, got)
		}
	}
	if p := h.last().URL.Path; p != "/org/model/resolve/v4.4/meta/info.json" {
		t.Errorf("request path %s", p)
	}
	// No partial or temporary file is left behind.
	filepath.Walk(c.Home, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".part") {
			t.Errorf("left %s", p)
		}
		return nil
	})
}

func TestErrors(t *testing.T) {
	h, _, c, _ := setup(t)
	h.token = "s3cret"
	h.forbid = "org/gated"
	tests := []struct {
		token, repo, rev, file string
		is                     error
		text                   string
	}{
		{"", "org/model", "v4.4", "model.pt", ErrUnauthorized, "hub: org/model revision v4.4 file model.pt: 401 unauthorized"},
		{"wrong", "org/model", "v4.4", "model.pt", ErrUnauthorized, "(set HUB_TOKEN)"},
		{"s3cret", "org/gated", "v1.4", "model.pt", ErrForbidden, "hub: org/gated revision v1.4 file model.pt: 403 forbidden"},
		{"s3cret", "org/model", "v9.9", "model.pt", ErrNotFound, "hub: org/model revision v9.9 file model.pt: 404 not found"},
		{"s3cret", "org/model", "v4.4", "missing.bin", ErrNotFound, "file missing.bin: 404 not found: check the repository name, the revision and the file name"},
		{"s3cret", "org/model", "v4.4", "../escape", nil, "file ../escape: invalid file name"},
	}
	for _, tt := range tests {
		t.Run(tt.repo+"@"+tt.rev+"/"+tt.file, func(t *testing.T) {
			c.Token = tt.token
			_, err := c.Download(context.Background(), tt.repo, tt.rev, []string{tt.file})
			if err == nil || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %v, want %q", err, tt.text)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err %v is not %v", err, tt.is)
			}
			if _, err := os.Stat(c.Path(tt.repo, tt.rev, tt.file)); err == nil {
				t.Error("a file was cached for a refused download")
			}
		})
	}
}

func TestOffline(t *testing.T) {
	h, srv, c, logs := setup(t)
	files := []string{"model.pt", "meta/info.json"}
	if _, err := c.Download(context.Background(), "org/model", "v4.4", files); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Download(context.Background(), "org/model", "main", []string{"model.pt"}); err != nil {
		t.Fatal(err)
	}
	n := h.count()

	// main asks again, with If-None-Match, and is answered 304.
	if _, err := c.Download(context.Background(), "org/model", "main", []string{"model.pt"}); err != nil {
		t.Fatal(err)
	}
	if h.count() != n+1 || h.last().Header.Get("If-None-Match") == "" {
		t.Errorf("main re-check: %d requests, If-None-Match %q", h.count()-n, h.last().Header.Get("If-None-Match"))
	}
	srv.Close()

	// pinned: no request at all
	if _, err := c.Download(context.Background(), "org/model", "v4.4", files); err != nil {
		t.Fatalf("pinned revision offline: %v", err)
	}
	checkFile(t, c, "org/model", "v4.4", "model.pt", h.files["org/model/v4.4/model.pt"])
	// main: the network fails, the cache is used with a warning
	c.Attempts = 1
	if _, err := c.Download(context.Background(), "org/model", "main", []string{"model.pt"}); err != nil {
		t.Fatalf("main offline with a cache: %v", err)
	}
	if !strings.Contains(logs.String(), "using the cached file") {
		t.Errorf("no fallback warning; log: %s", logs)
	}
	checkFile(t, c, "org/model", "main", "model.pt", h.files["org/model/main/model.pt"])
	// a file never downloaded cannot come from anywhere
	if _, err := c.Download(context.Background(), "org/model", "v4.4", []string{"other.bin"}); err == nil || !strings.Contains(err.Error(), "file other.bin") {
		t.Errorf("uncached file offline: %v", err)
	}
}

func TestInterruptedDownload(t *testing.T) {
	want := payload(100_000, 1)
	t.Run("resumed within the call", func(t *testing.T) {
		h, _, c, _ := setup(t)
		h.cutOnce["org/model/v4.4/model.pt"] = true
		if _, err := c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"}); err != nil {
			t.Fatal(err)
		}
		checkFile(t, c, "org/model", "v4.4", "model.pt", want)
		if h.count() != 2 {
			t.Fatalf("%d requests, want 2", h.count())
		}
		if got := h.last().Header.Get("Range"); got != "bytes=50000-" {
			t.Errorf("second request Range %q, want bytes=50000-", got)
		}
		if h.last().Header.Get("If-Range") == "" {
			t.Error("resume without If-Range")
		}
	})
	t.Run("resumed by the next run", func(t *testing.T) {
		h, _, c, _ := setup(t)
		c.Attempts = 1
		h.cutOnce["org/model/v4.4/model.pt"] = true
		_, err := c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"})
		if err == nil || !strings.Contains(err.Error(), "transfer broken off") {
			t.Fatalf("err = %v, want a broken transfer", err)
		}
		if _, err := os.Stat(c.Path("org/model", "v4.4", "model.pt")); err == nil {
			t.Fatal("an incomplete file was published under its final name")
		}
		if _, err := c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"}); err != nil {
			t.Fatal(err)
		}
		checkFile(t, c, "org/model", "v4.4", "model.pt", want)
		if got := h.last().Header.Get("Range"); got != "bytes=50000-" {
			t.Errorf("resume Range %q", got)
		}
	})
	t.Run("changed upstream", func(t *testing.T) {
		h, _, c, _ := setup(t)
		c.Attempts = 1
		h.cutOnce["org/model/v4.4/model.pt"] = true
		c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"})
		changed := payload(80_000, 7)
		h.files["org/model/v4.4/model.pt"] = changed // new ETag: If-Range fails, whole file sent
		if _, err := c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"}); err != nil {
			t.Fatal(err)
		}
		checkFile(t, c, "org/model", "v4.4", "model.pt", changed)
	})
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvEndpoint, "http://mirror.test/")
	t.Setenv(EnvToken, "tok")
	t.Setenv(EnvHome, "/cache/hub")
	c, err := FromEnv("http://default.test")
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "http://mirror.test" || c.Token != "tok" || c.Home != "/cache/hub" {
		t.Errorf("FromEnv = %+v", c)
	}
	t.Setenv(EnvEndpoint, "")
	if c, _ := FromEnv("http://default.test"); c.Endpoint != "http://default.test" {
		t.Errorf("default endpoint not used: %s", c.Endpoint)
	}
	if _, err := FromEnv(""); err == nil || !strings.Contains(err.Error(), EnvEndpoint) {
		t.Errorf("no endpoint: %v", err)
	}
}

// Two clients on one cache (two shards on a shared HUB_HOME) asking for the
// same file at once: the second waits for the first's download lock and
// then finds the file, so the hub is asked once and the file is whole.
func TestSharedCacheDownloadsOnce(t *testing.T) {
	data := payload(1<<16, 7)
	h := &fakeHub{files: map[string][]byte{"org/model/v4.4/model.pt": data}}
	first, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(first); <-release })
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	home := t.TempDir()
	waiting := make(chan struct{})
	lockWait = func(string) { close(waiting) }
	defer func() { lockWait = nil }()
	errs := make(chan error, 2)
	get := func() {
		c := &Client{Endpoint: srv.URL, Home: home}
		_, err := c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"})
		errs <- err
	}
	go get()
	<-first // the first client holds the lock; its request is at the hub
	go get()
	<-waiting // the second waits for the lock
	close(release)
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := h.count(); n != 1 {
		t.Errorf("%d requests to the hub, want 1", n)
	}
	got, err := os.ReadFile(filepath.Join(home, "org--model", "v4.4", "model.pt"))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("cached file: %d bytes, %v", len(got), err)
	}
}

// A client waiting for the lock gives up when its context ends.
func TestLockWaitCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	lockWait = func(string) { cancel() }
	defer func() { lockWait = nil }()
	if _, err := lockFile(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
