package service

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"archivekit/internal/atomicfile"
)

// SpoolMemory is the part of a request body kept in memory while it
// arrives; the rest goes to a temporary file (os.TempDir, /tmp in the
// images), which is removed when the request ends.
const SpoolMemory = 1 << 20

// AnswerGrace is the time a client has to accept each part of an answer
// before the minimum rate (BODY_MIN_BYTES_PER_S) applies to it as well: a
// write of n bytes must be taken within AnswerGrace + n/rate, or the
// connection is cut.
const AnswerGrace = 10 * time.Second

// spooled is a request body read to its end before the work begins.
type spooled struct {
	io.Reader
	file *os.File
}

func (s *spooled) Close() error { return nil }

// remove closes the temporary file, if any (its name was removed when it
// was made: spool).
func (s *spooled) remove() {
	if s.file != nil {
		_ = s.file.Close()
	}
}

// checkTempDir makes and removes a file in the temporary folder, where
// request bodies over SpoolMemory are stored: a folder that is missing or
// not writable fails the start naming it and TMPDIR (before, the service
// started and answered every large upload 400, as if the client's fault).
func checkTempDir() error {
	if err := atomicfile.CheckDir(os.TempDir()); err != nil {
		return fmt.Errorf("temporary folder %s (TMPDIR) cannot hold request bodies: %w; set TMPDIR to a folder this process (user %d) can write", os.TempDir(), err, os.Getuid())
	}
	return nil
}

// spoolError is a request body that could not be stored: the service's
// failure (its temporary folder), not the client's.
type spoolError struct{ err error }

func (e *spoolError) Error() string { return "storing the request body: " + e.err.Error() }
func (e *spoolError) Unwrap() error { return e.err }

// spool reads the body of r to its end (through the upload cap and the
// body deadlines already on it), keeping up to SpoolMemory in memory and
// the rest in a temporary file, and gives r the stored copy as its body.
// The returned function removes the copy. An error from the client's body
// is returned as it is (BodyError is true for the caps and deadlines).
func spool(r *http.Request) (func(), error) {
	if r.Body == nil || r.Body == http.NoBody {
		return func() {}, nil
	}
	var mem bytes.Buffer
	n, err := io.Copy(&mem, io.LimitReader(r.Body, SpoolMemory))
	if err != nil {
		return func() {}, gone(err)
	}
	s := &spooled{Reader: bytes.NewReader(mem.Bytes())}
	if n == SpoolMemory {
		f, err := os.CreateTemp("", "archivekit-body-*")
		if err != nil {
			return func() {}, &spoolError{err}
		}
		// Its name goes at once: the open file holds the body until it is
		// closed, and a service killed mid-request (kill -9, a lost
		// machine) leaves no copy of a client's document behind (one
		// stayed in TMPDIR for ever).
		_ = os.Remove(f.Name())
		s.file = f
		if _, err := f.Write(mem.Bytes()); err != nil {
			s.remove()
			return func() {}, &spoolError{err}
		}
		body := &readErr{r: r.Body}
		m, err := io.Copy(f, body)
		if err != nil {
			s.remove()
			if BodyError(err) || body.err != nil {
				return func() {}, gone(err) // the client's body, not the folder
			}
			return func() {}, &spoolError{err}
		}
		n += m
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			s.remove()
			return func() {}, err
		}
		s.Reader = f
	}
	_ = r.Body.Close()
	r.Body = s
	r.ContentLength = n
	return s.remove, nil
}

// readErr keeps the error its reader returned, so that a copy's error
// tells the client's body (cut off: unexpected EOF) from the temporary
// file's (a disk gone).
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// goneError is a request body the client stopped sending: its connection
// closed or was reset mid-body (read from the connection itself, not from
// a copy: a multipart body without its closing boundary is the client's
// mistake, answered 400).
type goneError struct{ err error }

func (e *goneError) Error() string { return "the client went away mid-body: " + e.err.Error() }
func (e *goneError) Unwrap() error { return e.err }

// gone wraps a read error of the connection's body that says the client
// went away (goneError); other errors are returned as they are.
func gone(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed) {
		return &goneError{err}
	}
	return err
}

// clients counts the heavy requests each client (by remote IP address)
// has in the work slots.
type clients struct {
	mu sync.Mutex
	n  map[string]int
}

// clientAddrKey is the context key of the request's client address
// (Config.ClientAddr), set as the request arrives.
type clientAddrKey struct{}

// clientKey is the client's name when API_TOKENS_FILE names it
// (ClientOf: clients behind one proxy, or one client on several
// addresses, are told apart), else its IP address (the port differs per
// connection; behind a trusted proxy, the address it forwarded for).
func clientKey(r *http.Request) string {
	if name := ClientOf(r.Context()); name != "" {
		return "client " + name
	}
	if a, _ := r.Context().Value(clientAddrKey{}).(string); a != "" {
		return a
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// take counts one more request for key unless it already has max.
func (c *clients) take(key string, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[key] >= max {
		return false
	}
	c.n[key]++
	return true
}

func (c *clients) give(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key]--; c.n[key] <= 0 {
		delete(c.n, key)
	}
}

// slot is one heavy request's hold on the work slots; release is safe to
// call more than once.
type slot struct {
	once sync.Once
	free func()
}

func (s *slot) release() {
	if s != nil {
		s.once.Do(s.free)
	}
}

// errBusy and errClientBusy are the two ways acquire can refuse.
var (
	errBusy       = errors.New("busy")
	errClientBusy = errors.New("client busy")
)

// acquire takes a work slot for r, within the per-client cap.
func (s *Service) acquire(r *http.Request) (*slot, error) {
	key := clientKey(r)
	if !s.perClient.take(key, s.Config.MaxPerClient) {
		return nil, errClientBusy
	}
	select {
	case s.slots <- struct{}{}:
		start := s.held.begin()
		return &slot{free: func() {
			s.held.end(start)
			<-s.slots
			s.perClient.give(key)
		}}, nil
	default:
		s.perClient.give(key)
		return nil, errBusy
	}
}

// slotTimes is a running mean of how long the work slots are held, the
// work of a heavy request (its body read before, its answer's reading
// after, are not counted), and when the slots held now were taken.
type slotTimes struct {
	mu   sync.Mutex
	mean time.Duration // exponentially weighted, one tenth a request
	// held counts the slots held now by the time they were taken.
	held map[time.Time]int
	now  func() time.Time // nil: time.Now
}

func (t *slotTimes) clock() time.Time {
	if t.now != nil {
		return t.now()
	}
	return time.Now()
}

// begin notes a slot taken now, and returns when.
func (t *slotTimes) begin() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	start := t.clock()
	if t.held == nil {
		t.held = map[time.Time]int{}
	}
	t.held[start]++
	return start
}

// end notes the slot taken at start freed: its time goes into the mean.
func (t *slotTimes) end(start time.Time) {
	t.mu.Lock()
	if t.held[start]--; t.held[start] <= 0 {
		delete(t.held, start)
	}
	t.mu.Unlock()
	t.note(t.clock().Sub(start))
}

func (t *slotTimes) note(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mean == 0 {
		t.mean = d
		return
	}
	t.mean += (d - t.mean) / 10
}

// retryAfter is the Retry-After of a request refused for want of a slot:
// the mean time a slot is held, in whole seconds from 1 to 60 (it was 1,
// and a client that obeyed it asked twenty times while a document of 20 s
// held its slot); before any slot was freed (a service just started), the
// time the oldest slot held now has been held, so that a client told 1 s
// at first is told longer as the work goes on (it was told 1 s a dozen
// times while every slot held a 13 s document).
func (t *slotTimes) retryAfter() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.mean
	if d == 0 {
		now := t.clock()
		for start := range t.held {
			d = max(d, now.Sub(start))
		}
	}
	secs := int((d + time.Second - 1) / time.Second)
	return strconv.Itoa(min(max(secs, 1), 60))
}

// refuseBusy answers a heavy request that found no slot.
func (s *Service) refuseBusy(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", s.held.retryAfter())
	if errors.Is(err, errClientBusy) {
		WriteError(w, http.StatusServiceUnavailable, ReasonRateLimited, fmt.Sprintf(
			"the service is busy: this client already has %d requests being served (MAX_CONCURRENT_PER_CLIENT); retry shortly", s.Config.MaxPerClient))
		return
	}
	WriteError(w, http.StatusServiceUnavailable, ReasonOverloaded, fmt.Sprintf(
		"the service is busy: %d requests are being served (MAX_CONCURRENT_REQUESTS); retry shortly", cap(s.slots)))
}

// answer is the ResponseWriter a work handler writes its answer to. The
// first byte of the answer frees the request's work slot (the work is
// done; a client slow to read holds no slot), and every write carries a
// write deadline: AnswerGrace plus the write's size at the minimum rate,
// shortened to DrainBodyGrace once a drain has begun, so that a client
// that does not read its answer is cut instead of holding the process.
type answer struct {
	*recorder
	rc   *http.ResponseController
	slot *slot
	rate int64

	mu       sync.Mutex
	writing  bool // a write has begun
	draining bool
}

func (a *answer) deadline(n int) time.Time {
	now := time.Now()
	d := now.Add(AnswerGrace)
	if a.rate > 0 {
		d = d.Add(time.Duration(float64(n) / float64(a.rate) * float64(time.Second)))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.writing = true
	if a.draining && now.Add(DrainBodyGrace).Before(d) {
		d = now.Add(DrainBodyGrace)
	}
	return d
}

func (a *answer) WriteHeader(code int) {
	a.slot.release()
	a.recorder.WriteHeader(code)
}

func (a *answer) Write(b []byte) (int, error) {
	a.slot.release()
	_ = a.rc.SetWriteDeadline(a.deadline(len(b)))
	return a.recorder.Write(b)
}

// drain gives an answer being written DrainBodyGrace from now for the
// write under way, and each later write as long; an answer not begun yet
// is work in flight, which the drain waits for.
func (a *answer) drain(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.draining = true
	if a.writing {
		_ = a.rc.SetWriteDeadline(now.Add(DrainBodyGrace))
	}
}

// Unwrap gives http.ResponseController access to the underlying writer.
func (a *answer) Unwrap() http.ResponseWriter { return a.recorder }
