// Package hub downloads model files from a model hub and caches them.
//
// A file of a repository at a revision is fetched from
//
//	{Endpoint}/{repo}/resolve/{revision}/{file}
//
// with "Authorization: Bearer {Token}" when a token is set. Go's HTTP
// client drops that header on a redirect to another host (hubs redirect
// large files to a storage host).
//
// Cache layout under Home (HUB_HOME):
//
//	{Home}/{owner}--{name}/{revision}/{file}           complete files
//	{Home}/{owner}--{name}/{revision}/.hub/{file}.part  download in progress
//	{Home}/{owner}--{name}/{revision}/.hub/{file}.etag  ETag of the cached file
//	{Home}/{owner}--{name}/{revision}/.hub/{file}.lock  held (flock) while it downloads
//
// A file is downloaded by one process at a time: the others (shards of a
// batch sharing HUB_HOME on one volume, several replicas) wait for its lock
// and then find it in place.
// A repository's "/" becomes "--" and a revision is path-escaped, so every
// (repo, revision, file) has its own path. A file appears under its final
// name only once complete: it is downloaded into the .part file, synced
// and renamed. An interrupted download leaves the .part file; the next
// attempt (a retry within the same call, or a later run) asks only for the
// missing bytes with an HTTP Range request, guarded by If-Range with the
// partial file's ETag so a changed file is fetched whole.
//
// Revisions: "main" (and "master") move, every other revision (a tag such
// as v4.4, or a commit) is pinned. A pinned revision whose files are all
// cached is served without any request, so it works offline. For a moving
// revision the hub is asked, with If-None-Match so an unchanged file is not
// downloaded again; when the hub cannot be reached (network error or a 5xx
// answer) the cached copy is used with a warning. 401, 403 and 404 are
// errors naming the repository, revision and file.
//
// Limits: a connection (TCP and TLS) must be made within ConnectTimeout
// and a transfer that sends nothing for ReadTimeout is cut (ErrStalled,
// then resumed up to Attempts), so the download lock is never held across
// an unbounded wait; a file over MaxBytes is refused (ErrTooLarge) before
// or while it arrives. A download is verified against the checksum the hub
// gives (X-Linked-Etag or ETag: a SHA-256, or a git blob SHA-1) and then
// against Check (the caller's: the model loads) before it is moved into the
// cache: a file that fails either is removed, never served.
package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"archivekit/internal/atomicfile"
	"archivekit/internal/filelock"
	"archivekit/internal/version"
)

// Environment variables read by FromEnv.
const (
	EnvEndpoint = "HUB_ENDPOINT" // hub base URL, e.g. a mirror
	EnvToken    = "HUB_TOKEN"    // bearer token
	EnvHome     = "HUB_HOME"     // cache directory
)

// Client downloads and caches hub files. The zero value is not usable;
// build one with FromEnv or fill the fields.
type Client struct {
	// Endpoint is the hub base URL, without the trailing slash.
	Endpoint string
	// Token, when not empty, is sent as a bearer token.
	Token string
	// Home is the cache directory.
	Home string
	// HTTP is the client used; nil means http.DefaultClient.
	HTTP *http.Client
	// Log receives warnings (cache fallbacks, retries); nil means slog.Default().
	Log *slog.Logger
	// Attempts is how many times one file is tried when the transfer breaks
	// off (each retry resumes); 0 means 3.
	Attempts int
	// ConnectTimeout bounds making a connection, ReadTimeout the wait for
	// the answer and each silence of the transfer; MaxBytes caps a file's
	// size. 0 means DefaultConnectTimeout, DefaultReadTimeout,
	// DefaultMaxBytes.
	ConnectTimeout, ReadTimeout time.Duration
	MaxBytes                    int64
	// Check, when set, is called with each downloaded file (its name in
	// the repository and where it lies, complete and verified) before it
	// is moved into the cache; an error keeps it out (removed).
	Check func(file, path string) error
}

// FromEnv returns a Client configured from HUB_ENDPOINT (else endpoint),
// HUB_TOKEN, HUB_HOME (else the user cache directory + "/archivekit/hub"),
// and the limits HUB_CONNECT_TIMEOUT_S, HUB_READ_TIMEOUT_S and
// HUB_MAX_BYTES (else their defaults).
func FromEnv(endpoint string) (*Client, error) {
	c := &Client{Endpoint: endpoint, Token: os.Getenv(EnvToken), Home: os.Getenv(EnvHome)}
	if err := c.limitsFromEnv(os.Getenv); err != nil {
		return nil, err
	}
	if v := os.Getenv(EnvEndpoint); v != "" {
		c.Endpoint = v
	}
	if c.Endpoint == "" {
		return nil, fmt.Errorf("hub: no endpoint: set %s to the hub's base URL (for example https://huggingface.co)", EnvEndpoint)
	}
	c.Endpoint = strings.TrimRight(c.Endpoint, "/")
	if c.Home == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("hub: no cache directory: set %s: %w", EnvHome, err)
		}
		c.Home = filepath.Join(dir, "archivekit", "hub")
	}
	return c, nil
}

// Moving reports whether a revision is a branch that can change ("main",
// "master"); every other revision is treated as pinned.
func Moving(revision string) bool { return revision == "main" || revision == "master" }

// Error is a failed download of one file.
type Error struct {
	Repo, Revision, File string
	Status               int // HTTP status, 0 for other failures
	Err                  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("hub: %s revision %s file %s: %v", e.Repo, e.Revision, e.File, e.Err)
}

// Unwrap returns the underlying problem.
func (e *Error) Unwrap() error { return e.Err }

// Errors for the hub's refusals, for errors.Is.
var (
	ErrUnauthorized = errors.New("401 unauthorized: the token is missing or was rejected (set HUB_TOKEN)")
	ErrForbidden    = errors.New("403 forbidden: the token may not read this repository (gated or private)")
	ErrNotFound     = errors.New("404 not found: check the repository name, the revision and the file name")
)

// Dir returns the cache directory of a repository revision.
func (c *Client) Dir(repo, revision string) string {
	return filepath.Join(c.Home, strings.ReplaceAll(repo, "/", "--"), url.PathEscape(revision))
}

// Path returns where file of repo at revision is cached.
func (c *Client) Path(repo, revision, file string) string {
	return filepath.Join(c.Dir(repo, revision), filepath.FromSlash(file))
}

func (c *Client) meta(repo, revision, file, suffix string) string {
	return filepath.Join(c.Dir(repo, revision), ".hub", filepath.FromSlash(file)+suffix)
}

// Download makes sure every file of repo at revision is in the cache and
// returns the cache directory of that revision (see Dir). Files are
// slash-separated paths inside the repository.
func (c *Client) Download(ctx context.Context, repo, revision string, files []string) (string, error) {
	if repo == "" || strings.Contains(repo, "..") || strings.HasPrefix(repo, "/") {
		return "", fmt.Errorf("hub: invalid repository %q", repo)
	}
	if revision == "" {
		return "", fmt.Errorf("hub: %s: empty revision", repo)
	}
	for _, f := range files {
		if f == "" || path.IsAbs(f) || path.Clean(f) != f || strings.HasPrefix(f, "../") || f == ".." {
			return "", &Error{Repo: repo, Revision: revision, File: f, Err: errors.New("invalid file name")}
		}
	}
	if !Moving(revision) && c.allCached(repo, revision, files) {
		return c.Dir(repo, revision), nil
	}
	for _, f := range files {
		if err := c.fetch(ctx, repo, revision, f); err != nil {
			return "", err
		}
	}
	return c.Dir(repo, revision), nil
}

func (c *Client) allCached(repo, revision string, files []string) bool {
	for _, f := range files {
		if st, err := os.Stat(c.Path(repo, revision, f)); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

func (c *Client) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}

// fetch brings one file into the cache, resuming and retrying a transfer
// that breaks off.
func (c *Client) fetch(ctx context.Context, repo, revision, file string) error {
	target := c.Path(repo, revision, file)
	if _, err := os.Stat(target); err == nil && !Moving(revision) {
		return nil
	}
	// One download of a file at a time in one cache, also across processes
	// (shards of a batch sharing HUB_HOME on one volume): the others wait,
	// then find the file in place.
	unlock, err := lockFile(ctx, c.meta(repo, revision, file, ".lock"))
	if err != nil {
		return &Error{Repo: repo, Revision: revision, File: file, Err: fmt.Errorf("cache lock: %w", err)}
	}
	defer unlock()
	_, statErr := os.Stat(target)
	cached := statErr == nil
	if cached && !Moving(revision) {
		return nil // downloaded by the process that held the lock
	}
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	for i := 0; i < attempts; i++ {
		var retry bool
		retry, err = c.try(ctx, repo, revision, file, cached)
		if err == nil || !retry || ctx.Err() != nil {
			break
		}
		if i+1 < attempts {
			c.log().Warn("hub: download interrupted, resuming", "repo", repo, "revision", revision, "file", file, "error", err)
			time.Sleep(time.Duration(i+1) * 200 * time.Millisecond)
		}
	}
	if err == nil {
		return nil
	}
	var he *Error
	if cached && errors.As(err, &he) && (he.Status == 0 || he.Status >= 500) {
		c.log().Warn("hub: cannot reach the hub, using the cached file", "repo", repo, "revision", revision, "file", file, "error", he.Err)
		return nil
	}
	return err
}

// try makes one request. retry says whether a new attempt may help
// (transfer broken off, 5xx).
func (c *Client) try(ctx context.Context, repo, revision, file string, cached bool) (retry bool, err error) {
	t := &transfer{repo: repo, revision: revision, file: file, cached: cached,
		target: c.Path(repo, revision, file), part: c.meta(repo, revision, file, ".part"),
		etagFile: c.meta(repo, revision, file, ".etag"), partTag: c.meta(repo, revision, file, ".part.etag")}
	u := c.Endpoint + "/" + repo + "/resolve/" + url.PathEscape(revision) + "/" + escapePath(file)
	// The watchdog cuts the request when nothing arrives for the read
	// timeout, from here to the last byte.
	wd := newWatchdog(ctx, c.readTimeout())
	defer wd.close()
	t.max, t.check = c.maxBytes(), c.Check
	req, err := http.NewRequestWithContext(wd.ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, t.fail(0, err)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	have := t.condition(req)
	version.SetUserAgent(req)
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return true, t.fail(0, wd.cause(err))
	}
	defer resp.Body.Close()
	have, body, retry, err := t.status(resp, have)
	if !body {
		return retry, err
	}
	retry, err = t.save(resp, wd.body(resp.Body), have)
	return retry, wd.cause(err)
}

// transfer is one request for a file: where it goes in the cache, and
// whether a copy is there already.
type transfer struct {
	repo, revision, file string
	cached               bool
	// target is the cached file; part the partial download, partTag its
	// ETag, etagFile the ETag of target.
	target, part, etagFile, partTag string
	// max is the size cap; check the caller's check before the move.
	max   int64
	check func(file, path string) error
}

func (t *transfer) fail(status int, e error) *Error {
	return &Error{Repo: t.repo, Revision: t.revision, File: t.file, Status: status, Err: e}
}

// condition makes req resume a partial download (Range, If-Range), or
// revalidate the cached copy (If-None-Match); have is the size of the part
// resumed.
func (t *transfer) condition(req *http.Request) (have int64) {
	if st, err := os.Stat(t.part); err == nil && st.Size() > 0 {
		have = st.Size()
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
		if tag, err := os.ReadFile(t.partTag); err == nil && len(tag) > 0 {
			req.Header.Set("If-Range", string(tag))
		}
	} else if t.cached {
		if tag, err := os.ReadFile(t.etagFile); err == nil && len(tag) > 0 {
			req.Header.Set("If-None-Match", string(tag))
		}
	}
	return have
}

// status reads the response's status: body says the body is to be saved,
// from byte have on (0: the whole file); otherwise err (nil: the cached
// copy is current) and whether a new attempt may help.
func (t *transfer) status(resp *http.Response, have int64) (from int64, body, retry bool, err error) {
	switch resp.StatusCode {
	case http.StatusNotModified:
		if t.cached {
			return 0, false, false, nil
		}
		return 0, false, false, t.fail(resp.StatusCode, errors.New("304 not modified for a file that is not cached"))
	case http.StatusOK:
		return 0, true, false, nil // whole file: any partial data is dropped
	case http.StatusPartialContent:
		if start := rangeStart(resp.Header.Get("Content-Range")); start != have {
			os.Remove(t.part)
			return 0, false, true, t.fail(resp.StatusCode, fmt.Errorf("server resumed at byte %d, have %d", start, have))
		}
		return have, true, false, nil
	case http.StatusRequestedRangeNotSatisfiable:
		os.Remove(t.part) // the partial file is stale or already complete; start over
		return 0, false, true, t.fail(resp.StatusCode, errors.New("416 range not satisfiable"))
	case http.StatusUnauthorized:
		return 0, false, false, t.fail(resp.StatusCode, ErrUnauthorized)
	case http.StatusForbidden:
		return 0, false, false, t.fail(resp.StatusCode, ErrForbidden)
	case http.StatusNotFound:
		return 0, false, false, t.fail(resp.StatusCode, ErrNotFound)
	default:
		return 0, false, resp.StatusCode >= 500, t.fail(resp.StatusCode, fmt.Errorf("unexpected HTTP status %s", resp.Status))
	}
}

// save appends the body to the part from byte have on (have 0: the part
// starts over) and, once it is whole, moves it in place with its ETag.
func (t *transfer) save(resp *http.Response, body io.Reader, have int64) (retry bool, err error) {
	if resp.ContentLength >= 0 && have+resp.ContentLength > t.max {
		os.Remove(t.part)
		return false, t.fail(0, fmt.Errorf("%w: %d bytes, the cap is %d (%s)", ErrTooLarge, have+resp.ContentLength, t.max, EnvMaxBytes))
	}
	if err := os.MkdirAll(filepath.Dir(t.part), 0o777); err != nil {
		return false, t.fail(0, err)
	}
	if err := os.MkdirAll(filepath.Dir(t.target), 0o777); err != nil {
		return false, t.fail(0, err)
	}
	etag := resp.Header.Get("ETag")
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if have == 0 {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if etag != "" {
			if err := atomicfile.WriteFile(t.partTag, []byte(etag), 0o666); err != nil {
				return false, t.fail(0, err)
			}
		} else {
			os.Remove(t.partTag)
		}
	}
	f, err := os.OpenFile(t.part, flags, 0o666)
	if err != nil {
		return false, t.fail(0, err)
	}
	n, copyErr := io.Copy(f, io.LimitReader(body, t.max-have+1))
	syncErr := f.Sync()
	closeErr := f.Close()
	if have+n > t.max {
		os.Remove(t.part)
		return false, t.fail(0, fmt.Errorf("%w: more than %d bytes (%s)", ErrTooLarge, t.max, EnvMaxBytes))
	}
	if copyErr != nil {
		return true, t.fail(0, fmt.Errorf("transfer broken off after %d bytes: %w", have+n, copyErr))
	}
	if err := errors.Join(syncErr, closeErr); err != nil {
		return false, t.fail(0, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return true, t.fail(0, fmt.Errorf("short body: %d of %d bytes", n, resp.ContentLength))
	}
	want, sum := checksum(resp)
	if err := verify(t.part, want, sum); err != nil {
		os.Remove(t.part)
		os.Remove(t.partTag)
		return errors.Is(err, ErrChecksum), t.fail(0, err)
	}
	if t.check != nil {
		if err := t.check(t.file, t.part); err != nil {
			os.Remove(t.part)
			os.Remove(t.partTag)
			return false, t.fail(0, loadError{err})
		}
	}
	return false, t.commit(etag)
}

// commit moves the whole part in place and keeps its ETag (that of the
// response, else the one recorded when the part started).
func (t *transfer) commit(etag string) error {
	if etag == "" {
		if tag, err := os.ReadFile(t.partTag); err == nil {
			etag = string(tag)
		}
	}
	if err := os.Rename(t.part, t.target); err != nil {
		return t.fail(0, err)
	}
	os.Remove(t.partTag)
	if etag != "" {
		if err := atomicfile.WriteFile(t.etagFile, []byte(etag), 0o666); err != nil {
			return t.fail(0, err)
		}
	} else {
		os.Remove(t.etagFile)
	}
	return nil
}

// lockWait, when set (tests), is called as a process starts to wait for a
// download lock.
var lockWait func(path string)

// lockFile takes an exclusive flock on path (created if missing), waiting
// for another holder until ctx ends; unlock releases it. The lock dies with
// the process, so a killed download never leaves the cache locked.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	return filelock.Lock(ctx, path, func() {
		if lockWait != nil {
			lockWait(path)
		}
	})
}

// rangeStart parses the first byte of "bytes START-END/TOTAL"; -1 if malformed.
func rangeStart(cr string) int64 {
	s, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return -1
	}
	s, _, ok = strings.Cut(s, "-")
	if !ok {
		return -1
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}
