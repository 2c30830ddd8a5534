package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"archivekit/internal/ledger"
)

// Limits of a download: the defaults of the Client fields of the same
// names, and the environment variables FromEnv reads them from.
const (
	DefaultConnectTimeout = 15 * time.Second
	DefaultReadTimeout    = 60 * time.Second
	DefaultMaxBytes       = 1 << 30 // 1 GiB: the published weights are under 400 MB

	EnvConnectTimeout = "HUB_CONNECT_TIMEOUT_S"
	EnvReadTimeout    = "HUB_READ_TIMEOUT_S"
	EnvMaxBytes       = "HUB_MAX_BYTES"
)

// ErrStalled is the error of a transfer that sent nothing for the read
// timeout: the request is cut (and retried, resuming, up to Attempts).
var ErrStalled = stalled{}

type stalled struct{}

func (stalled) Error() string   { return "stalled: the hub sent nothing for the read timeout" }
func (stalled) Transient() bool { return true }

// ErrTooLarge is the error of a file over the size cap (MaxBytes); the
// partial download is removed.
var ErrTooLarge = errors.New("file over the size cap")

// ErrChecksum is the error of a download whose content does not match the
// checksum the hub gave for it; it is removed, never cached.
var ErrChecksum = errors.New("checksum mismatch")

// Transient reports whether the failure passes (ledger.Transient): the
// hub answered 429 or 5xx, or the network, the disk or a timeout failed
// under the transfer. A refusal (401, 403, 404), a file over the size cap,
// a bad checksum or a file that does not load are not.
func (e *Error) Transient() bool {
	switch {
	case e.Status == http.StatusTooManyRequests || e.Status >= 500:
		return true
	case e.Status != 0 || errors.Is(e.Err, ErrTooLarge) || errors.Is(e.Err, ErrChecksum) || errors.As(e.Err, new(loadError)):
		return false
	case neverThere(e.Err):
		return false // a hub address to check (HUB_ENDPOINT), not an outage
	}
	return ledger.Transient(e.Err)
}

// neverThere reports an address that refuses connections or a host name
// that does not resolve.
func neverThere(err error) bool {
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &dns) && dns.IsNotFound)
}

// loadError is a downloaded file that Check refused.
type loadError struct{ err error }

func (e loadError) Error() string {
	return fmt.Sprintf("downloaded file does not load, not cached: %v", e.err)
}
func (e loadError) Unwrap() error { return e.err }

func (c *Client) connectTimeout() time.Duration {
	if c.ConnectTimeout > 0 {
		return c.ConnectTimeout
	}
	return DefaultConnectTimeout
}

func (c *Client) readTimeout() time.Duration {
	if c.ReadTimeout > 0 {
		return c.ReadTimeout
	}
	return DefaultReadTimeout
}

func (c *Client) maxBytes() int64 {
	if c.MaxBytes > 0 {
		return c.MaxBytes
	}
	return DefaultMaxBytes
}

// httpClient is c.HTTP, else a client whose connections (TCP and TLS) are
// given ConnectTimeout and whose answers' headers ReadTimeout.
func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: c.connectTimeout(), KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = c.connectTimeout()
	tr.ResponseHeaderTimeout = c.readTimeout()
	return &http.Client{Transport: tr}
}

// watchdog cuts a request (its context) when no byte arrived for the read
// timeout: from the request's start to its answer's headers, and between
// two reads of the body.
type watchdog struct {
	ctx   context.Context
	timer *time.Timer
	idle  time.Duration
	stop  context.CancelCauseFunc
}

func newWatchdog(ctx context.Context, idle time.Duration) *watchdog {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{ctx: ctx, idle: idle, stop: cancel}
	w.timer = time.AfterFunc(idle, func() { cancel(ErrStalled) })
	return w
}

// body wraps r so that each read that brings bytes restarts the timer.
func (w *watchdog) body(r io.Reader) io.Reader { return watchedReader{r, w} }

// cause turns the error of a cut request into ErrStalled.
func (w *watchdog) cause(err error) error {
	if err != nil && errors.Is(context.Cause(w.ctx), ErrStalled) {
		return fmt.Errorf("%w (%s)", ErrStalled, w.idle)
	}
	return err
}

func (w *watchdog) close() {
	w.timer.Stop()
	w.stop(nil)
}

type watchedReader struct {
	r io.Reader
	w *watchdog
}

func (r watchedReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.w.timer.Reset(r.w.idle)
	}
	return n, err
}

// checksum returns the digest the hub gives for a file and the hash that
// computes it: X-Linked-Etag (a hub's large files: the SHA-256 of the
// content), else the ETag when it is 64 hex digits (SHA-256) or 40 (the git
// blob SHA-1 of a hub's small files: of "blob <size>\x00" + content).
// want is "" when the hub gives none of these (nothing to verify).
func checksum(resp *http.Response) (want string, sum func(size int64) hash.Hash) {
	for _, h := range []string{"X-Linked-Etag", "ETag"} {
		v := strings.Trim(strings.TrimPrefix(strings.TrimSpace(resp.Header.Get(h)), "W/"), `"`)
		if _, err := hex.DecodeString(v); err != nil {
			continue
		}
		switch len(v) {
		case 64:
			return strings.ToLower(v), func(int64) hash.Hash { return sha256.New() }
		case 40:
			return strings.ToLower(v), func(size int64) hash.Hash {
				h := sha1.New()
				fmt.Fprintf(h, "blob %d\x00", size)
				return h
			}
		}
	}
	return "", nil
}

// verify checks the complete part file against the hub's checksum.
func verify(path, want string, sum func(size int64) hash.Hash) error {
	if want == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	h := sum(st.Size())
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%w: the hub gave %s, the %d bytes received hash to %s", ErrChecksum, want, st.Size(), got)
	}
	return nil
}

// limitsFromEnv reads the limits of FromEnv into c; a value that does not
// parse or is not above 0 is an error naming its variable.
func (c *Client) limitsFromEnv(getenv func(string) string) error {
	for _, s := range []struct {
		name string
		dst  *time.Duration
	}{{EnvConnectTimeout, &c.ConnectTimeout}, {EnvReadTimeout, &c.ReadTimeout}} {
		if v := strings.TrimSpace(getenv(s.name)); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0) || f > 86400 {
				return fmt.Errorf("hub: %s=%q: want seconds above 0", s.name, v)
			}
			*s.dst = time.Duration(f * float64(time.Second))
		}
	}
	if v := strings.TrimSpace(getenv(EnvMaxBytes)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("hub: %s=%q: want a number of bytes above 0", EnvMaxBytes, v)
		}
		c.MaxBytes = n
	}
	return nil
}
