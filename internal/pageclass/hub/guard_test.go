package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"archivekit/internal/ledger"
)

// standIn is a hub serving one file through serve, counting requests.
func standIn(t *testing.T, serve func(w http.ResponseWriter, r *http.Request)) (*Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		serve(w, r)
	}))
	t.Cleanup(srv.Close)
	return &Client{Endpoint: srv.URL, Home: t.TempDir(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, &n
}

// leftovers lists the files under the cache other than lock files.
func leftovers(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".lock") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// A transfer that stalls (headers and half the body, then nothing) ends
// with ErrStalled after the read timeout instead of hanging, is a passing
// failure, leaves no file in the cache, and does not keep the download
// lock: a second client on the cache gets the file once the hub is back.
// Before, Download hung for ever holding the lock.
func TestStalledTransferEnds(t *testing.T) {
	data := payload(50_000, 3)
	var stall atomic.Bool
	stall.Store(true)
	c, _ := standIn(t, func(w http.ResponseWriter, r *http.Request) {
		if !stall.Load() {
			http.ServeContent(w, r, "", time.Time{}, strings.NewReader(string(data)))
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		<-r.Context().Done() // nothing more until the client gives up
	})
	c.ReadTimeout, c.Attempts = 200*time.Millisecond, 2
	start := time.Now()
	_, err := c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"})
	if !errors.Is(err, ErrStalled) || !ledger.Transient(err) {
		t.Fatalf("err %v (transient %v), want ErrStalled, transient", err, ledger.Transient(err))
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the stalled download took %s", d)
	}
	if _, err := os.Stat(c.Path("org/model", "v4.4", "model.pt")); err == nil {
		t.Error("a stalled download is in the cache")
	}
	stall.Store(false)
	other := *c
	other.ReadTimeout = 0 // the default: the stall's short timeout is not under test here
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := other.Download(ctx, "org/model", "v4.4", []string{"model.pt"}); err != nil {
		t.Fatalf("after the stall: %v", err)
	}
	checkFile(t, &other, "org/model", "v4.4", "model.pt", data)
}

// A file over MaxBytes is refused, announced (Content-Length) or not
// (chunked), and nothing of it stays in the cache. Before, a 1.2 GB body
// was stored whole.
func TestSizeCap(t *testing.T) {
	data := payload(10_000, 4)
	for _, announced := range []bool{true, false} {
		c, _ := standIn(t, func(w http.ResponseWriter, r *http.Request) {
			if announced {
				w.Header().Set("Content-Length", fmt.Sprint(len(data)))
			}
			for i := 0; i < len(data); i += 1000 {
				w.Write(data[i : i+1000])
				w.(http.Flusher).Flush()
			}
		})
		c.MaxBytes = 4096
		_, err := c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"})
		if !errors.Is(err, ErrTooLarge) || ledger.Transient(err) {
			t.Errorf("announced %v: err %v, want ErrTooLarge, not transient", announced, err)
		}
		if l := leftovers(t, c.Home); len(l) != 0 {
			t.Errorf("announced %v: left in the cache: %v", announced, l)
		}
	}
}

// The hub's checksum is verified: a body that does not hash to the
// X-Linked-Etag (SHA-256) or the ETag (git blob SHA-1) is never cached;
// one that does is.
func TestChecksum(t *testing.T) {
	data := payload(20_000, 5)
	sha := sha256.Sum256(data)
	blob := sha1.New()
	fmt.Fprintf(blob, "blob %d\x00", len(data))
	blob.Write(data)
	good256, goodBlob := hex.EncodeToString(sha[:]), hex.EncodeToString(blob.Sum(nil))
	bad256 := strings.Repeat("ab", 32)
	for _, c := range []struct {
		name, header, value string
		ok                  bool
	}{
		{"sha256 right", "X-Linked-Etag", `"` + good256 + `"`, true},
		{"sha256 wrong", "X-Linked-Etag", `"` + bad256 + `"`, false},
		{"git blob right", "ETag", `"` + goodBlob + `"`, true},
		{"git blob wrong", "ETag", `W/"` + strings.Repeat("0", 40) + `"`, false},
		{"no checksum", "ETag", `"v1"`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, n := standIn(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set(c.header, c.value)
				w.Write(data)
			})
			_, err := cl.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"})
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				checkFile(t, cl, "org/model", "v4.4", "model.pt", data)
				return
			}
			if !errors.Is(err, ErrChecksum) {
				t.Fatalf("err %v, want ErrChecksum", err)
			}
			if _, err := os.Stat(cl.Path("org/model", "v4.4", "model.pt")); err == nil {
				t.Error("a file with a wrong checksum is in the cache")
			}
			if n.Load() < 2 {
				t.Errorf("%d requests: a mismatch is fetched again once", n.Load())
			}
		})
	}
}

// A download that Check refuses (a model.pt that does not load) is not
// moved into the cache, so the next Download, after the hub is fixed,
// fetches it again instead of serving it. Before, it stayed cached and a
// pinned revision was served from the cache without asking the hub.
func TestCheckedBeforeCached(t *testing.T) {
	good := payload(5_000, 6)
	var served atomic.Value
	served.Store([]byte("not a model"))
	c, n := standIn(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(served.Load().([]byte))
	})
	c.Check = func(file, path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if string(b) == "not a model" {
			return fmt.Errorf("%s: not a TorchScript archive", file)
		}
		return nil
	}
	_, err := c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"})
	if err == nil || !strings.Contains(err.Error(), "does not load") || ledger.Transient(err) {
		t.Fatalf("err %v, want a load failure, not transient", err)
	}
	if l := leftovers(t, c.Home); len(l) != 0 {
		t.Errorf("left in the cache: %v", l)
	}
	served.Store(good)
	if _, err := c.Download(context.Background(), "org/model", "v4.4", []string{"model.pt"}); err != nil {
		t.Fatal(err)
	}
	checkFile(t, c, "org/model", "v4.4", "model.pt", good)
	if n.Load() != 2 {
		t.Errorf("%d requests, want 2", n.Load())
	}
}

func TestLimitsFromEnv(t *testing.T) {
	env := map[string]string{EnvConnectTimeout: "2.5", EnvReadTimeout: "30", EnvMaxBytes: "1000"}
	var c Client
	if err := c.limitsFromEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if c.ConnectTimeout != 2500*time.Millisecond || c.ReadTimeout != 30*time.Second || c.MaxBytes != 1000 {
		t.Errorf("limits %v %v %d", c.ConnectTimeout, c.ReadTimeout, c.MaxBytes)
	}
	for k, v := range map[string]string{EnvConnectTimeout: "0", EnvReadTimeout: "x", EnvMaxBytes: "-1"} {
		if err := c.limitsFromEnv(func(n string) string { return map[string]string{k: v}[n] }); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}
