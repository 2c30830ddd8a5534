package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The jobs step (issue 30): the replicated translator of test/k8se2e/jobs.
const (
	jobsNS  = "archivekit-e2e-jobs"
	jobsDir = "test/k8se2e/jobs"
	// pgClusterIP is the database Service's address, fixed by
	// test/k8se2e/jobs: the test cluster has no DNS to resolve its name.
	pgClusterIP = "10.96.0.200"
	pgSelector  = "app.kubernetes.io/name=archivekit-postgres"
	trSelector  = "app.kubernetes.io/name=translate-api"
	// pageTime is about how long one page of the job takes (the stand-in's
	// delay is set from it), so the job runs about a minute.
	pageTime = 700 * time.Millisecond
)

// jobs is step 7: a job of many pages on the replicated translator, the pod
// running it killed mid-job, the job finished by the other replica.
func (d *driver) jobs() error {
	jd := *d
	jd.namespace = jobsNS
	r := &jobsRun{d: &jd, figures: map[string]any{}}
	err := r.run()
	d.report["jobs"] = r.figures
	if err != nil {
		jd.diagnose()
	}
	return err
}

// jobsRun is the jobs step's state.
type jobsRun struct {
	d       *driver
	url     string
	pages   []altoPage
	figures map[string]any

	// The uninterrupted translation of each page (synchronous /translate):
	// its answer, and its MT calls by text.
	want      [][]byte
	refCalls  []int            // calls per page, by the texts only that page sends
	textPages map[string][]int // text → the pages that sent it
	refByText map[string]int   // text → calls
	jobID     string
	submitAt  time.Time
	status    jobStatus
	victim    pod
	survivor  pod
	killAt    time.Time
	calls     []mtCall
}

// altoPage is one page of the sample ALTO as a document of its own.
type altoPage struct {
	name string
	data []byte
}

type jobStatus struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Items struct {
		Total     int `json:"total"`
		Queued    int `json:"queued"`
		Succeeded int `json:"succeeded"`
		Failed    int `json:"failed"`
	} `json:"items"`
}

func (r *jobsRun) run() error {
	steps := []struct {
		name string
		fn   func() error
	}{
		{"deploy", r.deploy},
		{"reference", r.reference},
		{"submit", r.submit},
		{"kill", r.kill},
		{"finish", r.finish},
		{"check", r.check},
		{"single replica", r.single},
	}
	for _, s := range steps {
		if err := s.fn(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// deploy makes the namespace, the volumes, the Secret archivekit-jobs (as
// the runbook tells an operator to), then applies the database first and
// the services once it is ready (a service replica that cannot reach the
// database at start exits and is restarted).
func (r *jobsRun) deploy() error {
	d := r.d
	if err := d.volumesFor("jobs-", map[string]string{
		"translate-hub-cache": "2Gi", "data-archivekit-postgres-0": "10Gi",
	}); err != nil {
		return err
	}
	pw := make([]byte, 24)
	if _, err := rand.Read(pw); err != nil {
		return err
	}
	secret := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: archivekit-jobs}
stringData:
  postgres-password: %[1]s
  database-url: "postgres://archivekit:%[1]s@%[2]s:5432/archivekit?sslmode=disable"
`, hex.EncodeToString(pw), pgClusterIP)
	if _, err := d.kcIn([]byte(secret), "apply", "-f", "-"); err != nil {
		return err
	}
	t := time.Now()
	if err := applyFixedIP(d, "apply", "-k", jobsDir, "-l", pgSelector); err != nil {
		return err
	}
	if _, err := d.kc("rollout", "status", "statefulset/archivekit-postgres", "--timeout", "5m"); err != nil {
		return err
	}
	pgReady := time.Since(t)
	if _, err := d.kc("apply", "-k", jobsDir); err != nil {
		return err
	}
	if _, err := d.kc("rollout", "status", "deployment/translate-api", "--timeout", "6m"); err != nil {
		return err
	}
	ps, err := r.running()
	if err != nil {
		return err
	}
	restarts := 0
	for _, p := range ps {
		for _, c := range p.Status.ContainerStatuses {
			restarts += c.RestartCount
		}
	}
	r.figures["postgres_ready_s"] = secs(pgReady)
	r.figures["rollout_s"] = secs(time.Since(t))
	r.figures["replica_restarts_at_start"] = restarts
	fmt.Printf("k8se2e: jobs: PostgreSQL (jobs-postgres image) ready %.1f s after apply; translate-api, 2 replicas, rolled out %.1f s after apply (%d restarts)\n",
		secs(pgReady), secs(time.Since(t)), restarts)
	if len(ps) != 2 {
		return fmt.Errorf("want 2 running translate-api replicas, got %d", len(ps))
	}
	r.url, err = d.serviceURL("translate-api")
	return err
}

// running lists the translate-api pods that run and are not being deleted.
func (r *jobsRun) running() ([]pod, error) {
	ps, err := r.d.pods(trSelector)
	if err != nil {
		return nil, err
	}
	var out []pod
	for _, p := range ps {
		if p.Status.Phase == "Running" && p.Metadata.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// splitALTO cuts an ALTO file into one document per Page with text (a
// TextBlock; the translator refuses a page without): each keeps the file's
// head (description, styles) and holds one page in its Layout. Documents
// are named by their page's number in the file.
func splitALTO(data []byte, base string) ([]altoPage, error) {
	s := string(data)
	open := strings.Index(s, "<Layout>")
	end := strings.LastIndex(s, "</Layout>")
	if open < 0 || end < open {
		return nil, errors.New("the sample ALTO has no Layout")
	}
	head, body := s[:open+len("<Layout>")], s[open+len("<Layout>"):end]
	var pages []altoPage
	for n := 1; ; n++ {
		i := strings.Index(body, "<Page ")
		if i < 0 {
			break
		}
		j := strings.Index(body[i:], "</Page>")
		if j < 0 {
			return nil, errors.New("the sample ALTO has a Page without its end")
		}
		page := body[i : i+j+len("</Page>")]
		body = body[i+j+len("</Page>"):]
		if !strings.Contains(page, "<TextBlock") {
			continue
		}
		pages = append(pages, altoPage{
			name: fmt.Sprintf("%s_p%02d.alto.xml", base, n),
			data: []byte(head + "\n" + page + "\n</Layout>\n</alto>\n"),
		})
	}
	if len(pages) == 0 {
		return nil, errors.New("the sample ALTO has no Page with text")
	}
	return pages, nil
}

// reference translates each page on its own through /translate, with no
// MT delay: the answers a job must give, and each page's MT calls (the
// calls during its request; requests one after the other).
func (r *jobsRun) reference() error {
	alto, err := os.ReadFile(r.d.altoPath())
	if err != nil {
		return err
	}
	if r.pages, err = splitALTO(alto, "MTX201501307"); err != nil {
		return err
	}
	mt := r.d.mt
	mt.delay.Store(0)
	mt.startLog()
	r.textPages, r.refByText = map[string][]int{}, map[string]int{}
	t := time.Now()
	for i, p := range r.pages {
		before := len(mt.logged())
		res := post(r.url+"/translate", "file", p.name, "application/xml", p.data, map[string]string{"source_lang": "cs", "target_lang": "en"}, nil)
		if res.err != nil || res.status != http.StatusOK {
			return fmt.Errorf("%s: /translate: status %d, %v: %.300s", p.name, res.status, res.err, res.body)
		}
		if err := checkSlow("translate-api", res.body, 0); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		r.want = append(r.want, res.body)
		for _, c := range mt.logged()[before:] {
			r.refByText[c.text]++
			if ps := r.textPages[c.text]; len(ps) == 0 || ps[len(ps)-1] != i {
				r.textPages[c.text] = append(ps, i)
			}
		}
	}
	r.refCalls = r.perPage(mt.logged())
	total := len(mt.logged())
	if total == 0 {
		return errors.New("the pages made no call to the MT stand-in")
	}
	delay := time.Duration(int64(pageTime) * int64(len(r.pages)) / int64(total))
	mt.delay.Store(int64(delay))
	r.figures["pages"] = len(r.pages)
	r.figures["mt_calls_uninterrupted"] = total
	r.figures["reference_s"] = secs(time.Since(t))
	r.figures["mt_delay_ms"] = delay.Milliseconds()
	fmt.Printf("k8se2e: jobs: %d one-page ALTO documents from the sample translated one by one through /translate in %.1f s: %d MT calls; stand-in delay now %v per call\n",
		len(r.pages), secs(time.Since(t)), total, delay)
	return nil
}

// perPage counts calls per page by the texts that only one page sends.
func (r *jobsRun) perPage(calls []mtCall) []int {
	n := make([]int, len(r.pages))
	for _, c := range calls {
		if ps := r.textPages[c.text]; len(ps) == 1 {
			n[ps[0]]++
		}
	}
	return n
}

// submit sends every page in one job (POST /jobs).
func (r *jobsRun) submit() error {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("source_lang", "cs")
	mw.WriteField("target_lang", "en")
	for _, p := range r.pages {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, p.name))
		h.Set("Content-Type", "application/xml")
		w, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		w.Write(p.data)
	}
	mw.Close()
	r.d.mt.startLog()
	t := time.Now()
	r.submitAt = t
	resp, err := http.Post(r.url+"/jobs", mw.FormDataContentType(), &body)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Location") == "" {
		return fmt.Errorf("POST /jobs: status %d, Location %q: %.300s", resp.StatusCode, resp.Header.Get("Location"), b)
	}
	if err := json.Unmarshal(b, &r.status); err != nil || r.status.ID == "" {
		return fmt.Errorf("POST /jobs: answer %.300s: %v", b, err)
	}
	r.jobID = r.status.ID
	r.figures["submit_ms"] = time.Since(t).Milliseconds()
	fmt.Printf("k8se2e: jobs: job %s of %d pages accepted (202, %s) in %d ms\n", r.jobID, len(r.pages), resp.Header.Get("Location"), time.Since(t).Milliseconds())
	return nil
}

// get reads the job's status through the Service (either replica answers).
func (r *jobsRun) get() (jobStatus, error) {
	var st jobStatus
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(r.url + "/jobs/" + r.jobID)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /jobs/%s: status %d: %.300s", r.jobID, resp.StatusCode, b)
	}
	return st, json.Unmarshal(b, &st)
}

// kill waits until a third of the pages are done, finds the pod running
// the job (the one whose calls reach the MT stand-in), kills its process
// with SIGKILL from the node, force-deletes the pod and scales the
// Deployment to one replica, so the ReplicaSet's replacement pod is removed
// again and only the other replica can finish the job.
func (r *jobsRun) kill() error {
	if err := r.waitThird(); err != nil {
		return err
	}
	calls := r.d.mt.logged()
	if len(calls) == 0 {
		return errors.New("a third of the job is done and no MT call came")
	}
	from := calls[len(calls)-1].from
	ps, err := r.running()
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.Status.PodIP == from {
			r.victim = p
		} else {
			r.survivor = p
		}
	}
	if r.victim.Metadata.Name == "" || r.survivor.Metadata.Name == "" {
		return fmt.Errorf("the MT calls come from %s: not one of two running replicas (%d running)", from, len(ps))
	}
	pid, err := findProcess(r.victim.Metadata.Name, "translate-api")
	if err != nil {
		return err
	}
	callsBefore := len(calls)
	r.killAt = time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill -9 %d: %v", pid, err)
	}
	if _, err := r.d.kc("delete", "pod", r.victim.Metadata.Name, "--grace-period=0", "--force", "--wait=false"); err != nil {
		return err
	}
	if _, err := r.d.kc("scale", "deployment/translate-api", "--replicas=1"); err != nil {
		return err
	}
	r.figures["killed_pod"] = r.victim.Metadata.Name
	r.figures["other_replica"] = r.survivor.Metadata.Name
	r.figures["pages_done_at_kill"] = r.status.Items.Succeeded
	r.figures["kill_after_submit_s"] = secs(r.killAt.Sub(r.submitAt))
	fmt.Printf("k8se2e: jobs: %d of %d pages done: killed pod %s (SIGKILL of its process %d on the node, %d MT calls so far, then the pod force-deleted and the Deployment scaled to 1); the other replica is %s\n",
		r.status.Items.Succeeded, len(r.pages), r.victim.Metadata.Name, pid, callsBefore, r.survivor.Metadata.Name)
	return nil
}

// waitThird waits until a third of the job's pages are done.
func (r *jobsRun) waitThird() error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st, err := r.get()
		if err != nil {
			return err
		}
		if st.State != "queued" && st.State != "running" {
			return fmt.Errorf("the job ended (%s, %+v) before a third of it was done", st.State, st.Items)
		}
		if st.Items.Succeeded >= len(r.pages)/3 {
			r.status = st
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("a third of the job was not done within 5 minutes: %+v", st.Items)
		}
		time.Sleep(100 * time.Millisecond) // polling the service, with a deadline
	}
}

// findProcess finds, among the node's processes, the one of the pod's
// container running cmd (its HOSTNAME is the pod's name).
func findProcess(podName, cmd string) (int, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	var found []int
	for _, dir := range dirs {
		argv, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || !strings.HasSuffix(strings.SplitN(string(argv), "\x00", 2)[0], "/"+cmd) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil || !bytes.Contains(append([]byte("\x00"), env...), []byte("\x00HOSTNAME="+podName+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		found = append(found, pid)
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("want one %s process of pod %s on the node, found %v", cmd, podName, found)
	}
	return found[0], nil
}

// finish waits for the job to end after the kill.
func (r *jobsRun) finish() error {
	if err := r.waitEnd(); err != nil {
		return fmt.Errorf("after the kill: %w", err)
	}
	done := time.Since(r.killAt)
	r.calls = r.d.mt.logged()
	var resumed time.Time
	for _, c := range r.calls {
		if c.at.After(r.killAt) && c.from == r.survivor.Status.PodIP {
			resumed = c.at
			break
		}
	}
	r.figures["finished_after_kill_s"] = secs(done)
	if !resumed.IsZero() {
		r.figures["resumed_after_kill_s"] = secs(resumed.Sub(r.killAt))
	}
	fmt.Printf("k8se2e: jobs: the job %s %.1f s after the kill; the other replica's first MT call %.1f s after it\n",
		r.status.State, secs(done), secs(resumed.Sub(r.killAt)))
	return nil
}

// check: the job succeeded with every page, each page translated once (only
// the page in flight at the kill again), all calls after the kill from the
// other replica, every answer equal to /translate's, and the other
// replica's log names the job's end.
func (r *jobsRun) check() error {
	n := len(r.pages)
	it := r.status.Items
	again, problems := r.outcome(r.calls)
	// Who called the MT stand-in after the kill (a call sent before it may
	// arrive a moment later).
	late := 0
	for _, c := range r.calls {
		if c.at.After(r.killAt.Add(200*time.Millisecond)) && c.from != r.survivor.Status.PodIP {
			late++
		}
	}
	if late > 0 {
		problems = append(problems, fmt.Sprintf("%d MT calls after the kill came from another pod than the other replica %s", late, r.survivor.Metadata.Name))
	}
	// The job's own record of runs, and every answer.
	res, err := r.results()
	if err != nil {
		return err
	}
	var rerun []string
	for _, item := range res.Items {
		if item.Runs > 1 {
			rerun = append(rerun, fmt.Sprintf("%s (%d runs)", item.Name, item.Runs))
		}
	}
	if len(rerun) > 1 {
		problems = append(problems, "items started more than once (only the one in flight may be): "+strings.Join(rerun, ", "))
	}
	same, diffs := r.answers(res)
	problems = append(problems, diffs...)
	logs, err := r.d.kc("logs", r.survivor.Metadata.Name)
	if err != nil {
		return err
	}
	endedHere := false
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `"job ended"`) && strings.Contains(l, r.jobID) {
			endedHere = true
		}
	}
	if !endedHere {
		problems = append(problems, fmt.Sprintf("the other replica %s logged no \"job ended\" for job %s", r.survivor.Metadata.Name, r.jobID))
	}
	sort.Strings(again)
	r.figures["pages_translated_again"] = again
	r.figures["items_started_again"] = rerun
	r.figures["answers_equal_to_translate"] = same
	r.figures["mt_calls_job"] = len(r.calls)
	fmt.Printf("k8se2e: jobs: %d of %d pages succeeded, each recorded done once; MT calls %d (uninterrupted %d); pages translated again: %d %v (the page in flight at the kill); items started again: %v; %d of %d answers byte-identical to /translate's; \"job ended\" logged by the other replica %s\n",
		it.Succeeded, n, len(r.calls), r.figures["mt_calls_uninterrupted"], len(again), again, rerun, same, n, r.survivor.Metadata.Name)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// answers compares the job's answer for every page with /translate's: how
// many are the same, and what differs.
func (r *jobsRun) answers(res jobResults) (same int, problems []string) {
	index := map[string]int{}
	for _, item := range res.Items {
		index[item.Name] = item.Item
	}
	for i, p := range r.pages {
		k, ok := index[p.name]
		if !ok {
			problems = append(problems, p.name+": not among the job's items")
			continue
		}
		b, err := r.item(k, p.name)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if !bytes.Equal(b, r.want[i]) {
			problems = append(problems, fmt.Sprintf("%s: the job's answer (%d bytes) differs from /translate's (%d bytes) at byte %d", p.name, len(b), len(r.want[i]), firstDiff(b, r.want[i])))
			continue
		}
		same++
	}
	return same, problems
}

// outcome checks an ended job: every page succeeded, no page has fewer MT
// calls than its uninterrupted translation and at most one (the one in
// flight at the kill or stop) more. It returns the pages translated again
// (more calls) and the problems.
func (r *jobsRun) outcome(calls []mtCall) (again, problems []string) {
	n := len(r.pages)
	if it := r.status.Items; r.status.State != "succeeded" || it.Total != n || it.Succeeded != n || it.Failed != 0 {
		problems = append(problems, fmt.Sprintf("job %s: %+v, want %d pages succeeded", r.status.State, it, n))
	}
	got := r.perPage(calls)
	var missing []string
	for i := range r.pages {
		switch {
		case got[i] > r.refCalls[i]:
			again = append(again, fmt.Sprintf("%s (%d calls, uninterrupted %d)", r.pages[i].name, got[i], r.refCalls[i]))
		case got[i] < r.refCalls[i]:
			missing = append(missing, fmt.Sprintf("%s (%d calls, uninterrupted %d)", r.pages[i].name, got[i], r.refCalls[i]))
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "pages with fewer MT calls than an uninterrupted translation: "+strings.Join(missing, ", "))
	}
	if len(again) > 1 {
		problems = append(problems, "pages translated again (only the one in flight may be): "+strings.Join(again, ", "))
	}
	if again == nil {
		again = []string{}
	}
	return again, problems
}

type jobResults struct {
	Items []struct {
		Item int    `json:"item"`
		Name string `json:"name"`
		Runs int    `json:"runs"`
	} `json:"items"`
}

// getBody GETs url: its status and body. A request that gets no answer
// (connection refused or reset, as a Service's routes change after a
// restart) is tried again, up to five times a second apart, each retry
// printed; an answer of any status is returned as it is.
func getBody(url string) (int, []byte, error) {
	for try := 1; ; try++ {
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(url)
		if err == nil {
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, b, err
		}
		if try == 5 {
			return 0, nil, err
		}
		fmt.Printf("k8se2e: GET %s: %v; trying again\n", url, err)
		time.Sleep(time.Second) // retrying a request that got no answer
	}
}

func (r *jobsRun) results() (jobResults, error) {
	var res jobResults
	status, b, err := getBody(r.url + "/jobs/" + r.jobID + "/results")
	if err != nil {
		return res, err
	}
	if status != http.StatusOK {
		return res, fmt.Errorf("GET /jobs/%s/results: status %d: %.300s", r.jobID, status, b)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return res, err
	}
	if len(res.Items) != len(r.pages) {
		return res, fmt.Errorf("results: %d items, want %d", len(res.Items), len(r.pages))
	}
	return res, nil
}

// item is the job's answer for item i (page name) as the synchronous
// endpoint gave it.
func (r *jobsRun) item(i int, name string) ([]byte, error) {
	status, b, err := getBody(fmt.Sprintf("%s/jobs/%s/results/%d", r.url, r.jobID, i))
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("%s: GET /jobs/%s/results/%d: status %d: %.300s", name, r.jobID, i, status, b)
	}
	return b, err
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// The one-replica part of the jobs step: deploy/overlays/local.
const (
	singleNS  = "archivekit-e2e-single"
	singleDir = "test/k8se2e/single"
)

// single runs the same job on the one-replica overlay (SQLite on a claim,
// the Recreate strategy) and restarts the Deployment (kubectl rollout
// restart) when a third is done: the old pod drains (its item in flight
// finished) and is gone before the new one starts, which opens the state
// folder and finishes the job. Passes when no two pods ran at once, the job
// succeeds with every page, at most one page has more MT calls than
// uninterrupted and none fewer, and every answer is /translate's.
func (r *jobsRun) single() (err error) {
	sd := *r.d
	sd.namespace = singleNS
	defer func() {
		if err != nil {
			sd.diagnose() // its own namespace's pods, events and logs
		}
	}()
	s := &jobsRun{d: &sd, pages: r.pages, want: r.want, refCalls: r.refCalls, textPages: r.textPages, figures: map[string]any{}}
	r.figures["single_replica"] = s.figures
	if err := sd.volumesFor("single-", map[string]string{"translate-hub-cache": "2Gi", "translate-jobs": "5Gi"}); err != nil {
		return err
	}
	t := time.Now()
	if _, err := sd.kc("apply", "-k", singleDir); err != nil {
		return err
	}
	if _, err := sd.kc("rollout", "status", "deployment/translate-api", "--timeout", "6m"); err != nil {
		return err
	}
	s.figures["rollout_s"] = secs(time.Since(t))
	if s.url, err = sd.serviceURL("translate-api"); err != nil {
		return err
	}
	old, err := s.running()
	if err != nil || len(old) != 1 {
		return fmt.Errorf("want one running translate-api pod, got %d (%v)", len(old), err)
	}
	if err := s.submit(); err != nil {
		return err
	}
	if err := s.waitThird(); err != nil {
		return err
	}
	atRestart := s.status.Items.Succeeded
	restartAt := time.Now()
	if _, err := sd.kc("rollout", "restart", "deployment/translate-api"); err != nil {
		return err
	}
	rolled := make(chan error, 1)
	go func() {
		_, err := sd.kc("rollout", "status", "deployment/translate-api", "--timeout", "6m")
		rolled <- err
	}()
	most := 0
	var rollErr error
watch:
	for {
		select {
		case rollErr = <-rolled:
			break watch
		case <-time.After(200 * time.Millisecond): // polling the pods while the rollout runs
		}
		ps, err := sd.pods(trSelector)
		if err != nil {
			continue
		}
		n := 0
		for _, p := range ps {
			if p.Status.Phase == "Pending" || p.Status.Phase == "Running" {
				n++
			}
		}
		most = max(most, n)
	}
	if rollErr != nil {
		return rollErr
	}
	rolledIn := time.Since(restartAt)
	if err := s.waitEnd(); err != nil {
		return err
	}
	var problems []string
	if most > 1 {
		problems = append(problems, fmt.Sprintf("%d pods at once during the Recreate rollout; want one", most))
	}
	it := s.status.Items
	again, more := s.outcome(s.d.mt.logged())
	problems = append(problems, more...)
	res, err := s.results()
	if err != nil {
		return err
	}
	same, diffs := s.answers(res)
	problems = append(problems, diffs...)
	s.figures["pages_done_at_restart"] = atRestart
	s.figures["restart_rolled_out_s"] = secs(rolledIn)
	s.figures["pods_at_once_max"] = most
	s.figures["pages_translated_again"] = again
	s.figures["answers_equal_to_translate"] = same
	fmt.Printf("k8se2e: jobs: one replica (SQLite, Recreate): restarted at %d of %d pages done; the new pod ready %.1f s after the restart, at most %d pod at once; job %s, %d of %d pages; pages translated again: %d %v; %d of %d answers byte-identical to /translate's\n",
		atRestart, len(s.pages), secs(rolledIn), most, s.status.State, it.Succeeded, len(s.pages), len(again), again, same, len(s.pages))
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// waitEnd waits for the job to end; the service may not answer for a while
// (a restart).
func (r *jobsRun) waitEnd() error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st, err := r.get()
		if err == nil && st.State != "queued" && st.State != "running" {
			r.status = st
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the job has not ended within 5 minutes: %+v, %v", st, err)
		}
		time.Sleep(250 * time.Millisecond) // polling the service, with a deadline
	}
}

// applyFixedIP runs kubectl args (an apply of the database Service, whose
// ClusterIP is fixed: pgClusterIP) and runs it again, every 2 s for up to
// 2 minutes, while the cluster refuses it because that address is still
// allocated: a Service of that address deleted by an earlier step is
// released by the cluster's allocator some time after it is gone.
func applyFixedIP(d *driver, args ...string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := d.kc(args...)
		if err == nil || !strings.Contains(err.Error(), "provided IP is already allocated") || time.Now().After(deadline) {
			return err
		}
		fmt.Fprintf(os.Stderr, "k8se2e: jobs: %s still allocated; applying again in 2 s\n", pgClusterIP)
		time.Sleep(2 * time.Second) // waiting on the cluster's address allocator, not a synchronisation of ours
	}
}
