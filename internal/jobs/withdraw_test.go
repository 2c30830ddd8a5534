package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"archivekit/internal/jobs"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
)

// withdrawing answers every item 200; the item 1.xml withdraws item 0
// while it runs (held until then; 1.xml waits until 0.xml's request has
// begun, so that item 0 is running when it is withdrawn: with two item
// workers 1.xml could be served first, and the withdrawal of an item not
// yet running was refused, CI run on c2dae8e), and 2.xml withdraws item 1,
// which has succeeded; 3.xml names an item that is no name.
type withdrawing struct {
	q        *jobs.Queue
	started0 chan struct{} // closed when 0.xml's request begins
	release  chan struct{}
	t        *testing.T

	mu  sync.Mutex
	got map[string]bool // what each Withdraw reported (the success stands)
}

func (h *withdrawing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, fh, err := r.FormFile("file")
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, "no file")
		return
	}
	name, ok := jobs.ItemName(r.Context())
	if !ok {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, "no item name")
		return
	}
	job, _, _ := strings.Cut(name, "/items/")
	withdraw := func(item string) {
		ok, err := h.q.Withdraw(r.Context(), item, http.StatusInternalServerError, service.ReasonBackendError, "withdrawn by "+fh.Filename)
		if err != nil {
			h.t.Errorf("%s: Withdraw(%s): %v", fh.Filename, item, err)
		}
		h.mu.Lock()
		h.got[item] = ok
		h.mu.Unlock()
	}
	switch fh.Filename {
	case "0.xml":
		close(h.started0)
		<-h.release
	case "1.xml":
		<-h.started0
		withdraw(job + "/items/0")
		close(h.release)
	case "2.xml":
		withdraw(job + "/items/1")
	case "3.xml":
		withdraw(job + "/nothing/1")
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{"name": fh.Filename})
}

// TestWithdraw: at an item's last run (UnavailableTries 1 here), an item
// withdrawn while it runs ends failed when it succeeds, and one withdrawn
// after it succeeded is failed then, each with the status, reason and
// detail given, its result that error; an item of a job that has ended,
// and a name that names no item, are not withdrawn.
func TestWithdraw(t *testing.T) { stores(t, testWithdraw) }

func testWithdraw(t *testing.T, newStore store) {
	h := &withdrawing{started0: make(chan struct{}), release: make(chan struct{}), t: t, got: map[string]bool{}}
	svc, q := newServiceWith(t, newStore(t), h, jobs.Options{ItemWorkers: 2, UnavailableTries: 1})
	h.q = q
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var parts []servicetest.Part
	for i := range 4 {
		parts = append(parts, file(fmt.Sprintf("%d.xml", i), "x"))
	}
	_, _, st := submit(t, ts.URL, "", parts...)
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 4, Succeeded: 2, Failed: 2}) {
		t.Errorf("items %+v, want 2 succeeded, 2 failed", st.Items)
	}
	for i, e := range st.Errors {
		if e.Item != i || e.Status != 500 || e.Reason != service.ReasonBackendError || e.Error != fmt.Sprintf("withdrawn by %d.xml", i+1) {
			t.Errorf("error %d: %+v", i, e)
		}
	}
	h.mu.Lock()
	if got := fmt.Sprint(h.got); got != fmt.Sprintf("map[%[1]s/items/0:false %[1]s/items/1:false %[1]s/nothing/1:false]", st.ID) {
		t.Errorf("Withdraw reported %s", got)
	}
	h.mu.Unlock()
	for i := range 4 {
		var answer struct {
			Name   string
			Status int
			Reason service.Reason
		}
		resp, err := http.Get(fmt.Sprintf("%s/jobs/%s/results/%d", ts.URL, st.ID, i))
		if err != nil {
			t.Fatal(err)
		}
		code := resp.StatusCode
		if err := json.Unmarshal(servicetest.ReadBody(t, resp), &answer); err != nil {
			t.Errorf("result %d: %v", i, err)
		}
		if i < 2 && (code != 500 || answer.Status != 500 || answer.Reason != service.ReasonBackendError) ||
			i >= 2 && (code != 200 || answer.Name != fmt.Sprintf("%d.xml", i)) {
			t.Errorf("result %d: %d %+v", i, code, answer)
		}
	}
	if stands, err := q.Withdraw(context.Background(), st.ID+"/items/2", 500, service.ReasonBackendError, "late"); !stands || err != nil {
		t.Errorf("an item of an ended job withdrawn: its success stands %v, %v", stands, err)
	}
	if stands, err := q.Withdraw(context.Background(), st.ID+"/items/0", 500, service.ReasonBackendError, "again"); stands || err != nil {
		t.Errorf("a failed item of an ended job: its success stands %v, %v", stands, err)
	}
	if st := waitState(t, q, ts.URL, st.ID, jobs.Succeeded); st.Items.Succeeded != 2 {
		t.Errorf("after a late Withdraw: %+v", st.Items)
	}
}

// withdrawOnce answers every item 200, counting the runs of each file;
// 1.xml withdraws item 0 (succeeded before it: one item worker) on its
// first run only, as a backend's passing refusal would.
type withdrawOnce struct {
	q *jobs.Queue
	t *testing.T

	mu   sync.Mutex
	runs map[string]int
}

func (h *withdrawOnce) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, fh, err := r.FormFile("file")
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, "no file")
		return
	}
	name, _ := jobs.ItemName(r.Context())
	job, _, _ := strings.Cut(name, "/items/")
	h.mu.Lock()
	h.runs[fh.Filename]++
	first := h.runs[fh.Filename] == 1
	h.mu.Unlock()
	if fh.Filename == "1.xml" && first {
		if stands, err := h.q.Withdraw(r.Context(), job+"/items/0", http.StatusInternalServerError, service.ReasonBackendError, "withdrawn"); stands || err != nil {
			h.t.Errorf("Withdraw: stands %v, %v", stands, err)
		}
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{"name": fh.Filename, "run": h.runs[fh.Filename]})
}

// TestWithdrawRunsAgain: an item withdrawn with runs left is run again
// before its job ends, and the job ends with every item succeeded (a
// passing block page of the MT service failed the items translated just
// before it for good, in a job said to succeed).
func TestWithdrawRunsAgain(t *testing.T) { stores(t, testWithdrawRunsAgain) }

func testWithdrawRunsAgain(t *testing.T, newStore store) {
	h := &withdrawOnce{t: t, runs: map[string]int{}}
	svc, q := newServiceWith(t, newStore(t), h, jobs.Options{ItemWorkers: 1})
	h.q = q
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", file("0.xml", "x"), file("1.xml", "x"), file("2.xml", "x"))
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 3, Succeeded: 3}) || len(st.Errors) != 0 {
		t.Errorf("items %+v, errors %+v; want 3 succeeded", st.Items, st.Errors)
	}
	h.mu.Lock()
	if got := fmt.Sprint(h.runs); got != "map[0.xml:2 1.xml:1 2.xml:1]" {
		t.Errorf("runs %s, want 0.xml run twice", got)
	}
	h.mu.Unlock()
	resp, err := http.Get(fmt.Sprintf("%s/jobs/%s/results/0", ts.URL, st.ID))
	if err != nil {
		t.Fatal(err)
	}
	var answer struct{ Run int }
	if b := servicetest.ReadBody(t, resp); resp.StatusCode != 200 || json.Unmarshal(b, &answer) != nil || answer.Run != 2 {
		t.Errorf("result 0: %d %s, want its second run's answer", resp.StatusCode, b)
	}
}
