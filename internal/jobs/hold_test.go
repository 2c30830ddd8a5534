package jobs_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/service/servicetest"
)

// TestAnswerHeldWhileDiskFull: an item whose answer its file refuses (the
// job folder full, here the first three writes) is not run again: the
// answer is held in memory and written when there is room, and the item
// succeeds with its whole answer, its handler called once. A translate-api
// item translated its document again (billed) on each of the job's
// retries.
func TestAnswerHeldWhileDiskFull(t *testing.T) {
	e := &echo{}
	var logs servicetest.LogBuffer
	svc, q := newServiceLogged(t, t.TempDir(), e, jobs.Options{}, &logs)
	var refusals atomic.Int32
	refusals.Store(3)
	jobs.FailingParts(q, func() bool { return refusals.Add(-1) >= 0 }, syscall.ENOSPC, time.Millisecond)
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, _, st := submit(t, ts.URL, "", file("a.xml", "<a/>"))
	if code != 202 {
		t.Fatalf("submit: %d", code)
	}
	waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	var out map[string]any
	if len(res.Items) != 1 || json.Unmarshal(res.Items[0].Output, &out) != nil || out["name"] != "a.xml" || out["size"] != float64(4) {
		t.Fatalf("results %+v", res)
	}
	e.mu.Lock()
	calls := strings.Join(e.calls, ",")
	e.mu.Unlock()
	if calls != "start a.xml,end a.xml" {
		t.Errorf("handler calls %s, want one", calls)
	}
	if refusals.Load() >= 0 {
		t.Errorf("the answer's file refused %d writes fewer than set", refusals.Load()+1)
	}
	if !strings.Contains(logs.String(), "held in memory and written when there is room") || !strings.Contains(logs.String(), "no space left on device") {
		t.Errorf("log does not say the answer was held:\n%s", logs.String())
	}
}
