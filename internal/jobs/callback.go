package jobs

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/riverqueue/river"

	"archivekit/internal/fetch"
)

// CallbackField is the form field of POST /jobs naming the URL that is
// sent the job's status when it ends (succeeded, failed or canceled).
const CallbackField = "callback_url"

// EnvCallbackSecret is the environment variable with the secret callbacks
// are signed with; without it a job with a callback URL is refused.
const EnvCallbackSecret = "JOBS_CALLBACK_SECRET"

// EnvCallbackPrivate is the environment variable that, set to 1, lets
// callbacks go to private, loopback and link-local addresses (refused by
// default: a callback URL must not reach into the service's own network).
const EnvCallbackPrivate = "JOBS_CALLBACK_ALLOW_PRIVATE"

// privateIP reports whether ip is one a callback may not reach by default:
// fetch.IsPrivate's rule, the one book fetches keep (an IPv6 address
// carrying a private IPv4 one included).
func privateIP(ip net.IP) bool {
	a, ok := netip.AddrFromSlice(ip)
	return !ok || fetch.IsPrivate(a)
}

// callbackClient sends the callbacks; unless private addresses are
// allowed, its dialer refuses them at connect time (whatever a name
// resolved to when the job was submitted).
func (q *Queue) callbackClient() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if !q.opts.CallbackPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip := net.ParseIP(host); ip == nil || privateIP(ip) {
				return fmt.Errorf("callback to a private address %s refused (%s=1 allows it)", host, EnvCallbackPrivate)
			}
			return nil
		}
	}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, Proxy: http.ProxyFromEnvironment, TLSHandshakeTimeout: 10 * time.Second}}
}

// Callback headers: the job, the Unix time of the sending, and
// "sha256=" and the hex HMAC-SHA256 of timestamp "." body under the
// secret (Sign).
const (
	HeaderJob       = "X-Archivekit-Job"
	HeaderTimestamp = "X-Archivekit-Timestamp"
	HeaderSignature = "X-Archivekit-Signature"
)

// Sign is the signature header value of a callback body sent at
// timestamp (Unix seconds, as in HeaderTimestamp).
func Sign(secret []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte("."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// callbackArgs is the River job of a job's callback.
type callbackArgs struct {
	ID string `json:"id"`
}

// Kind is River's name of the callback kind.
func (callbackArgs) Kind() string { return "archivekit_job_callback" }

// callbackQueue is the River queue of the callbacks, with callbackWorkers
// workers of its own: a receiver that fails held a job worker through its
// round of attempts (a minute), and the next job waited (with the default
// JOBS_WORKERS=1 every job did).
const (
	callbackQueue   = "archivekit_callbacks"
	callbackWorkers = 4
)

// InsertOpts puts a callback in its own queue.
func (callbackArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: callbackQueue} }

// callbackWorker sends callbacks for River.
type callbackWorker struct {
	river.WorkerDefaults[callbackArgs]
	q *Queue
}

// Timeout: the attempts and their waits take as long as they take.
func (callbackWorker) Timeout(*river.Job[callbackArgs]) time.Duration { return -1 }

// Work posts the job's status to its callback URL, trying again after
// 1, 2, 4... times the backoff (Options.CallbackBackoff) up to
// Options.CallbackAttempts times; after that River tries the whole again
// later, by its own retry policy.
func (w *callbackWorker) Work(ctx context.Context, j *river.Job[callbackArgs]) error {
	q := w.q
	var target string
	if err := q.queryRow(ctx, `SELECT COALESCE(callback_url, '') FROM archivekit_job WHERE id = ?`, j.Args.ID).Scan(&target); err != nil {
		return err
	}
	st, err := q.status(ctx, j.Args.ID)
	if err != nil {
		return err
	}
	body, err := json.Marshal(st)
	if err != nil {
		return err
	}
	wait := q.opts.CallbackBackoff
	for attempt := 1; ; attempt++ {
		err = q.post(ctx, target, j.Args.ID, body)
		if err == nil {
			q.log.Info("callback delivered", "job", j.Args.ID, "attempt", attempt)
			return nil
		}
		q.log.Warn("callback failed", "job", j.Args.ID, "attempt", attempt, "error", err.Error())
		if attempt >= q.opts.CallbackAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-q.stop:
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// post sends one signed callback.
func (q *Queue) post(ctx context.Context, target, id string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderJob, id)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Sign(q.opts.CallbackSecret, ts, body))
	resp, err := q.callbacks.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("callback answered %s", resp.Status)
	}
	return nil
}

// checkCallback says what is wrong with a callback URL ("" nothing).
func (q *Queue) checkCallback(raw string) string {
	if len(q.opts.CallbackSecret) == 0 {
		return CallbackField + " needs " + EnvCallbackSecret + " set on the service (callbacks are signed)"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return CallbackField + " must be an absolute http or https URL"
	}
	if q.opts.CallbackPrivate {
		return ""
	}
	ips := []net.IP{net.ParseIP(u.Hostname())}
	if ips[0] == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupIP(ctx, "ip", u.Hostname())
		if err != nil {
			return CallbackField + ": its host cannot be resolved: " + err.Error()
		}
		ips = addrs
	}
	for _, ip := range ips {
		if privateIP(ip) {
			return CallbackField + " points to a private address (" + ip.String() + "); the service refuses it unless " + EnvCallbackPrivate + "=1"
		}
	}
	return ""
}
