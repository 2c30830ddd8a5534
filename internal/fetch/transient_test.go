package fetch

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// refusing is a transport that refuses every request with a HostError
// wrapping an error of its own, counting them.
type refusing struct{ n atomic.Int32 }

func (r *refusing) RoundTrip(req *http.Request) (*http.Response, error) {
	r.n.Add(1)
	return nil, &HostError{Host: req.URL.Host, Err: errors.New("host refused by the caller's rule")}
}

// TestHostErrorNotRetried: a refusal that says it is not transient
// (HostError) is not tried again, whatever it wraps (a transport's own
// refusal was retried as a passing failure).
func TestHostErrorNotRetried(t *testing.T) {
	tr := &refusing{}
	f := New(Policy{Private: PrivateAllowed, Retries: 3, Backoff: time.Millisecond}, tr)
	_, err := f.Get(context.Background(), "http://archive.example.org/p.png")
	var he *HostError
	if !errors.As(err, &he) || tr.n.Load() != 1 {
		t.Errorf("err %v after %d requests; want the HostError after one", err, tr.n.Load())
	}
}
