// Command k8se2e is the orchestrator acceptance of page-classification spec
// 9 (and translation spec 3, 5, 8), run against a live cluster: make
// k8s-e2e starts a one-node Kubernetes (tools/k8s/cluster.sh), imports the
// images of make images and runs this driver, which talks to the cluster
// with kubectl (the one of the cluster's own version, so no client library
// is linked into the project's module) and to the services through their
// Service addresses, as a client inside the cluster network would.
//
// Steps, each named in the output and in the failure message:
//
//  1. rollout: apply test/k8se2e/services (deploy/overlays/local in the
//     namespace archivekit-e2e) and wait for both Deployments;
//  2. healthcheck: the image's healthcheck passes inside each pod;
//  3. skill: orchestrator acceptance item 5, each tool's agent skill
//     (docs/skills/<tool>/SKILL.md) followed from its own text: its
//     Kubernetes start (apply, rollout status), its checks of /info,
//     /health and /health?deep=true, and its sample request
//     (pageclass-client on a sample page; the sample ALTO to /translate);
//  4. restart: kubectl rollout restart of both with a slow request in
//     flight (a multi-page PDF to /predict_document; the 79-page ALTO to
//     /translate through a slow MT stand-in) and a steady stream of requests
//     through each Service, and one more slow request sent straight to
//     each old pod when it is told to stop (so SIGTERM, 5 s later, finds
//     it in flight): no request may fail;
//  5. config: PORT=9000, LOG_LEVEL=DEBUG, an accepted and a refused
//     ALLOWED_ORIGINS and MAX_UPLOAD_MB=1 (a 2 MB upload answered 413)
//     reach each process;
//  6. batch: the Indexed Jobs of deploy/batch (test/k8se2e/batch) run their
//     four shards each to completion, one translator index failing once on
//     purpose and retried alone (backoffLimitPerIndex);
//  7. jobs: the replicated translator (deploy/overlays/cpu: two replicas
//     and the PostgreSQL job store, test/k8se2e/jobs) takes a job of 65
//     one-page ALTO documents; the pod running it is killed mid-job
//     (SIGKILL of its process, then the pod force-deleted) and the job
//     finishes on the other replica, every page translated once (MT calls
//     counted per page; only the page in flight at the kill again) and
//     every answer equal to the synchronous /translate's; then the same
//     job on the one-replica overlay (deploy/overlays/local: SQLite,
//     Recreate, test/k8se2e/single), restarted at a third done, finishes
//     in the new pod with no two pods at once (jobs.go).
//
// The figures go to -report (JSON) and to stdout.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"archivekit/internal/shard"
)

const (
	// preStop is the manifests' pre-stop sleep (spec 3.3): SIGTERM reaches
	// the process this long after the pod is told to stop.
	preStop  = 5 * time.Second
	ns       = "archivekit-e2e"
	nodeIP   = "10.244.0.1"
	mtAddr   = nodeIP + ":18080"
	services = "test/k8se2e/services"
	batchDir = "test/k8se2e/batch"
)

type driver struct {
	kubectl, kubeconfig, repo, shared, volumes string
	namespace                                  string // ns, or the jobs step's jobsNS
	bin                                        string // pageclass-client, for the skill step
	mt                                         *mtStandIn
	report                                     map[string]any
	failureFile                                string // -failure: where fail writes the failed step and its error
}

func main() {
	// Every request opens its own connection, so it follows kube-proxy's
	// rules as they are now. A kept-alive connection is pinned to wherever
	// its first packet went: to a Service's pod that is gone since, or,
	// made before kube-proxy wrote the Service's rules, out of the machine
	// to its gateway, which on this machine answers any address (HTTP 404,
	// empty body). Two runs failed so, polling that gateway for minutes
	// (steps skill and jobs) while the Service was routed.
	http.DefaultTransport.(*http.Transport).DisableKeepAlives = true
	d := &driver{report: map[string]any{}, namespace: ns}
	flag.StringVar(&d.kubectl, "kubectl", "kubectl", "the kubectl binary")
	flag.StringVar(&d.kubeconfig, "kubeconfig", "", "the cluster's kubeconfig")
	flag.StringVar(&d.repo, "repo", ".", "the repository root")
	flag.StringVar(&d.shared, "shared", "../shared", "the project data folder (data/pages, data/translator)")
	flag.StringVar(&d.volumes, "volumes", "", "a folder on the node for the hostPath volumes")
	flag.StringVar(&d.bin, "bin", "", "a folder holding pageclass-client (the skill step puts it on PATH)")
	report := flag.String("report", "", "write the figures here (JSON)")
	flag.StringVar(&d.failureFile, "failure", "", "on failure, write the failed step and its error here (tools/k8s/e2e.sh prints it again after the logs and the teardown, as the run's last line)")
	only := flag.String("steps", "", "run only these steps (comma-separated names, in the usual order; a step may need an earlier one: jobs needs none, rollout needs setup); default all")
	flag.Parse()
	if d.kubeconfig == "" || d.volumes == "" || d.bin == "" {
		fmt.Fprintln(os.Stderr, "k8se2e: -kubeconfig, -volumes and -bin are required")
		os.Exit(2)
	}
	start := time.Now()
	var err error
	if d.mt, err = startStandIn(mtAddr); err != nil {
		d.fail("setup", err)
	}
	defer d.mt.close()

	steps := []struct {
		name string
		fn   func() error
	}{
		{"setup", d.setup}, {"rollout", d.rollout}, {"healthcheck", d.healthcheck}, {"skill", d.skill},
		{"restart", d.restart}, {"config", d.config}, {"batch", d.batch}, {"jobs", d.jobs},
	}
	run := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		run[strings.TrimSpace(s)] = true
	}
	for _, s := range steps {
		if *only == "" || run[s.name] {
			d.step(s.name, s.fn)
			delete(run, s.name)
		}
	}
	if *only != "" && len(run) > 0 {
		d.fail("steps", fmt.Errorf("-steps %q names no step: %v", *only, run))
	}
	d.report["total_s"] = secs(time.Since(start))
	b, _ := json.MarshalIndent(d.report, "", "  ")
	if *report != "" {
		if err := os.WriteFile(*report, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "k8se2e:", err)
		}
	}
	fmt.Printf("k8se2e: all steps passed\n%s\n", b)
}

func secs(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

func (d *driver) step(name string, fn func() error) {
	fmt.Printf("k8se2e: == %s\n", name)
	t := time.Now()
	if err := fn(); err != nil {
		d.fail(name, err)
	}
	fmt.Printf("k8se2e: %s passed (%.1f s)\n", name, secs(time.Since(t)))
}

// fail prints what an operator needs to see (pods, events, the pods' logs)
// and exits 1; the caller (tools/k8s/e2e.sh) adds the components' logs.
func (d *driver) fail(name string, err error) {
	msg := fmt.Sprintf("step %q: %v", name, err)
	fmt.Fprintf(os.Stderr, "\nk8se2e: FAILED %s\n", msg)
	if d.failureFile != "" {
		if werr := os.WriteFile(d.failureFile, []byte(msg+"\n"), 0o644); werr != nil {
			fmt.Fprintln(os.Stderr, "k8se2e:", werr)
		}
	}
	d.diagnose()
	os.Exit(1)
}

// nodeTaints names the nodes' taints ("" for none or when kubectl
// fails): node.kubernetes.io/disk-pressure, for one, means the machine's
// disk is short and no pod is scheduled.
func (d *driver) nodeTaints() string {
	out, err := d.kc("get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}{"\t"}{range .spec.taints[*]}{.key}{":"}{.effect}{" "}{end}{"\n"}{end}`)
	if err != nil {
		return ""
	}
	return taints(out)
}

// taints reads nodeTaints' kubectl output (a line a node: its name, a tab,
// its taints key:effect separated by spaces) as "node: taint, taint; node:
// ...", leaving out nodes without taints.
func taints(out string) string {
	var nodes []string
	for _, line := range strings.Split(out, "\n") {
		name, list, _ := strings.Cut(line, "\t")
		if f := strings.Fields(list); len(f) > 0 {
			nodes = append(nodes, strings.TrimSpace(name)+": "+strings.Join(f, ", "))
		}
	}
	return strings.Join(nodes, "; ")
}

// diagnose prints the pods, events and pods' logs of d's namespace, and
// the nodes' conditions and taints.
func (d *driver) diagnose() {
	for _, args := range [][]string{
		{"get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}{"\n  taints: "}{.spec.taints}{"\n  conditions: "}{range .status.conditions[*]}{.type}={.status} {end}{"\n"}{end}`},
		{"get", "pods,jobs,deployments,statefulsets,endpointslices", "-o", "wide"},
		{"get", "events", "--sort-by", ".lastTimestamp"},
		{"logs", "-l", "app.kubernetes.io/name", "--all-containers", "--prefix", "--tail", "40", "--max-log-requests", "20"},
	} {
		out, _ := d.kc(args...)
		fmt.Fprintf(os.Stderr, "----- kubectl -n %s %s\n%s\n", d.namespace, strings.Join(args, " "), out)
	}
}

// kc runs kubectl in the test namespace; the error carries its output.
func (d *driver) kc(args ...string) (string, error) {
	return d.kcIn(nil, args...)
}

func (d *driver) kcIn(stdin []byte, args ...string) (string, error) {
	cmd := exec.Command(d.kubectl, append([]string{"--kubeconfig", d.kubeconfig, "-n", d.namespace}, args...)...)
	cmd.Dir = d.repo
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// setup makes the namespace and a hostPath volume for each claim of the
// manifests (a one-node cluster has no provisioner), each pre-bound to its
// claim and owned by uid 10001, as the runbook asks of a real volume.
func (d *driver) setup() error {
	return d.volumesFor("", map[string]string{
		"pageclass-model": "10Gi", "pageclass-hub-cache": "20Gi",
		"translate-hub-cache": "2Gi", "archivekit-batch": "100Gi",
		"pageclass-jobs": "5Gi", "translate-jobs": "5Gi",
	})
}

// volumesFor makes d's namespace and a volume for each of its claims (name
// → size), in folders named prefix + claim under -volumes.
func (d *driver) volumesFor(prefix string, claims map[string]string) error {
	if _, err := d.kc("create", "namespace", d.namespace); err != nil {
		return err
	}
	var docs []string
	names := make([]string, 0, len(claims))
	for c := range claims {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		dir := filepath.Join(d.volumes, prefix+c)
		if err := mkdirOwned(dir); err != nil {
			return err
		}
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %s-%s}
spec:
  capacity: {storage: %s}
  accessModes: [ReadWriteOnce, ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: {namespace: %s, name: %s}
  hostPath: {path: %s, type: Directory}
`, d.namespace, c, claims[c], d.namespace, c, dir))
	}
	_, err := d.kcIn([]byte(strings.Join(docs, "---\n")), "apply", "-f", "-")
	return err
}

func mkdirOwned(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.Chown(dir, 10001, 10001)
}

// rollout applies the services and times each Deployment until it is
// available.
func (d *driver) rollout() error {
	t := time.Now()
	if _, err := d.kc("apply", "-k", services); err != nil {
		return err
	}
	times := map[string]float64{}
	for _, dep := range []string{"pageclass-api", "translate-api"} {
		if _, err := d.kc("rollout", "status", "deployment/"+dep, "--timeout", "6m"); err != nil {
			if taints := d.nodeTaints(); taints != "" {
				return fmt.Errorf("%w; the node has taints, which keep pods Pending: %s", err, taints)
			}
			return err
		}
		times[dep] = secs(time.Since(t))
	}
	d.report["rollout_s"] = times
	fmt.Printf("k8se2e: applied and rolled out: pageclass-api %.1f s, translate-api %.1f s after apply\n",
		times["pageclass-api"], times["translate-api"])
	return nil
}

func (d *driver) healthcheck() error {
	for _, dep := range []string{"pageclass-api", "translate-api"} {
		if _, err := d.kc("exec", "deployment/"+dep, "--", "/opt/archivekit/bin/healthcheck"); err != nil {
			return fmt.Errorf("%s: the healthcheck inside the pod failed: %v", dep, err)
		}
	}
	d.report["healthcheck"] = "passes inside both pods (kubectl exec deployment/X -- /opt/archivekit/bin/healthcheck)"
	return nil
}

// serviceURL is http://<cluster IP>:<port> of a Service (kube-proxy routes
// it from the node). A Deployment can be available before kube-proxy has
// written the Service's rules (the connection is then refused, or, on a
// machine whose gateway answers any address, some other server answers),
// so it returns once /health answers 200 through the Service, within
// three minutes (each try on a new connection: see main). On failure it
// says whether the node's nat table has a rule for the address.
func (d *driver) serviceURL(name string) (string, error) {
	out, err := d.kc("get", "service", name, "-o", "jsonpath={.spec.clusterIP}:{.spec.ports[0].port}")
	if err != nil {
		return "", err
	}
	url := "http://" + strings.TrimSpace(out)
	client := &http.Client{Timeout: 5 * time.Second}
	start := time.Now()
	for {
		resp, err := client.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if waited := time.Since(start); waited > time.Second {
					fmt.Printf("k8se2e: service %s routed after %.1f s\n", name, secs(waited))
				}
				return url, nil
			}
			err = fmt.Errorf("/health answered %d", resp.StatusCode)
		}
		if time.Since(start) > 3*time.Minute {
			return "", fmt.Errorf("service %s (%s) not routed three minutes after its rollout: %v (%s)", name, url, err,
				natRules(strings.TrimSpace(strings.Split(out, ":")[0])))
		}
		time.Sleep(250 * time.Millisecond) // polling kube-proxy's rules, not ordering our own goroutines
	}
}

// natRules says what the node's nat table (iptables-save) holds for a
// Service's cluster IP: kube-proxy writes a KUBE-SERVICES rule for it.
func natRules(ip string) string {
	out, err := exec.Command("iptables-save", "-t", "nat").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("iptables-save: %v", err)
	}
	var rules []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, ip+"/32") {
			rules = append(rules, line)
		}
	}
	if len(rules) == 0 {
		return "the node's nat table has no rule for " + ip + ": kube-proxy has not written the Service's rules"
	}
	return "the node's nat table has: " + strings.Join(rules, "; ")
}

type pod struct {
	Metadata struct {
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp *time.Time        `json:"deletionTimestamp"`
	} `json:"metadata"`
	Status struct {
		Phase             string `json:"phase"`
		PodIP             string `json:"podIP"`
		ContainerStatuses []struct {
			RestartCount int `json:"restartCount"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

func (d *driver) pods(selector string) ([]pod, error) {
	out, err := d.kc("get", "pods", "-l", selector, "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct{ Items []pod }
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("kubectl get pods: %v", err)
	}
	return list.Items, nil
}

// stream sends GET /info to url every interval until stop is closed and
// counts what came back. Connections are kept alive between requests, as a
// client's are. A 503 with Retry-After (a pod draining after SIGTERM refuses
// new work so, spec 3, with keep-alives off) is retried once on a new
// connection, as the specification tells clients to; such requests are
// counted apart (retried). A request fails when its answer, after that one
// retry, is not 200, or on a transport error.
type stream struct {
	sent, failed, retried atomic.Int64
	mu                    sync.Mutex
	errs                  []string
}

func (s *stream) run(url string, interval time.Duration, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	client := &http.Client{Timeout: 10 * time.Second}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	get := func() (int, string, error) {
		resp, err := client.Get(url + "/info")
		if err != nil {
			return 0, "", err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After"), nil
	}
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		s.sent.Add(1)
		code, retryAfter, err := get()
		if err == nil && code == http.StatusServiceUnavailable && retryAfter != "" {
			s.retried.Add(1)
			code, _, err = get()
		}
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("status %d", code)
		}
		if err != nil {
			s.failed.Add(1)
			s.mu.Lock()
			if len(s.errs) < 10 {
				s.errs = append(s.errs, time.Now().Format("15:04:05.000")+" "+err.Error())
			}
			s.mu.Unlock()
		}
	}
}

// slowResult is the outcome of one long request.
type slowResult struct {
	status   int
	body     []byte
	err      error
	sentAt   time.Time // request fully written
	doneAt   time.Time
	duration time.Duration
}

// post sends a multipart form (one file part plus fields) and signals
// written once the whole request has gone out.
func post(url, field, name, ctype string, data []byte, fields map[string]string, written chan<- time.Time) slowResult {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name=%q; filename=%q`, field, name)}
	h["Content-Type"] = []string{ctype}
	part, _ := mw.CreatePart(h)
	part.Write(data)
	mw.Close()
	var r slowResult
	start := time.Now()
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
		r.sentAt = time.Now()
		if written != nil {
			written <- r.sentAt
		}
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", url, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := (&http.Client{Timeout: 3 * time.Minute}).Do(req)
	if err == nil {
		r.status = resp.StatusCode
		r.body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	r.err = err
	r.doneAt = time.Now()
	r.duration = r.doneAt.Sub(start)
	return r
}

func (d *driver) altoPath() string {
	return filepath.Join(d.shared, "data", "translator", "alto", "MTX201501307_anon.alto.xml")
}

// restart is step 3 of spec 9's acceptance.
func (d *driver) restart() error {
	r, err := d.newRestartRun()
	if err != nil {
		return err
	}
	if err := r.calibrate(); err != nil {
		return err
	}
	if err := r.listOldPods(); err != nil {
		return err
	}
	r.startLoad()
	if err := r.sendSlow(); err != nil {
		close(r.stop)
		return err
	}
	r.restartAt = time.Now()
	if _, err := d.kc("rollout", "restart", "deployment/pageclass-api", "deployment/translate-api"); err != nil {
		close(r.stop)
		return err
	}
	rolloutErr := r.waitRollout()
	r.collect()
	r.drainAndStop()
	if rolloutErr != nil {
		return rolloutErr
	}
	var problems []string
	figures := map[string]any{"rollout_after_restart_s": secs(r.rolledAt.Sub(r.restartAt))}
	for _, dep := range []string{"pageclass-api", "translate-api"} {
		f, p := r.figures(dep)
		figures[dep] = f
		problems = append(problems, p...)
	}
	d.report["restart"] = figures
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// restartRun is the state of the restart step: the slow requests' payloads,
// the old pods, the streams and the watcher's findings, and the results.
type restartRun struct {
	d            *driver
	pcURL, trURL string
	pages        []string
	pdf, alto    []byte
	trFields     map[string]string

	olds          map[string][]string // deployment → its pods before the restart
	oldIP, oldDep map[string]string   // old pod → its IP, its deployment

	// atStop receives the requests sent to each deployment's old pod when
	// it is told to stop (atStopCopies of them).
	atStop    map[string]chan slowResult
	stop      chan struct{} // closed: the streams and the watcher end
	wg        sync.WaitGroup
	streams   map[string]*stream
	watchDone chan struct{}

	mu       sync.Mutex
	stopping map[string]time.Time // pod → when it was seen told to stop
	gone     map[string]time.Time // old pod → when it was seen gone

	results             map[string][]chan slowResult // the slow requests sent before the restart
	slow                map[string][]slowResult
	stopped             map[string]slowResult
	restartAt, rolledAt time.Time
}

// copies is how many copies of the PDF go to the classifier before the
// restart.
const copies = 2

// newRestartRun finds both Services and builds the slow requests'
// payloads. The PDF: 50 sample pages (the spec's page limit), scaled to at
// most 1200 px so the document stays under the 10 MB cap.
func (d *driver) newRestartRun() (*restartRun, error) {
	r := &restartRun{d: d, trFields: map[string]string{"source_lang": "cs", "target_lang": "en"}}
	var err error
	if r.pcURL, err = d.serviceURL("pageclass-api"); err != nil {
		return nil, err
	}
	if r.trURL, err = d.serviceURL("translate-api"); err != nil {
		return nil, err
	}
	pages, err := samplePages(filepath.Join(d.shared, "data", "pages"))
	if err != nil {
		return nil, err
	}
	r.pages = pickPages(pages, 50)
	if r.pdf, err = buildPDF(r.pages, 1200); err != nil {
		return nil, err
	}
	if r.alto, err = os.ReadFile(d.altoPath()); err != nil {
		return nil, err
	}
	return r, nil
}

// pickPages keeps at most n of pages, evenly spread.
func pickPages(pages []string, n int) []string {
	if len(pages) <= n {
		return pages
	}
	step := len(pages) / n
	var pick []string
	for i := 0; i < len(pages) && len(pick) < n; i += step {
		pick = append(pick, pages[i])
	}
	return pick
}

// calibrate sets the MT stand-in's delay: one run with a small delay per
// call measures how long the ALTO takes (the translator may send chunks
// side by side), then the delay is scaled so the ALTO takes about 25 s,
// well inside the 45 s the process has after SIGTERM (spec 3.3).
func (r *restartRun) calibrate() error {
	const probeDelay = 20 * time.Millisecond
	mt := r.d.mt
	mt.delay.Store(int64(probeDelay))
	before := mt.calls.Load()
	cal := post(r.trURL+"/translate", "file", "MTX201501307_anon.alto.xml", "application/xml", r.alto, r.trFields, nil)
	if cal.err != nil || cal.status != 200 {
		return fmt.Errorf("translate-api: calibration request: status %d, %v: %.300s", cal.status, cal.err, cal.body)
	}
	if err := checkSlow("translate-api", cal.body, 0); err != nil {
		return err
	}
	calls := mt.calls.Load() - before
	if calls == 0 {
		return errors.New("translate-api: the calibration request made no call to the MT stand-in")
	}
	mt.delay.Store(int64(float64(probeDelay) * 25 / cal.duration.Seconds()))
	fmt.Printf("k8se2e: ALTO of %d bytes: %d MT calls, %.1f s at %v per call; stand-in delay now %v per call\n",
		len(r.alto), calls, secs(cal.duration), probeDelay, time.Duration(mt.delay.Load()))
	return nil
}

// listOldPods records the pods of both deployments before the restart.
func (r *restartRun) listOldPods() error {
	r.olds = map[string][]string{}
	r.oldIP, r.oldDep = map[string]string{}, map[string]string{}
	for _, dep := range []string{"pageclass-api", "translate-api"} {
		ps, err := r.d.pods("app.kubernetes.io/name=" + dep)
		if err != nil {
			return err
		}
		for _, p := range ps {
			r.olds[dep] = append(r.olds[dep], p.Metadata.Name)
			r.oldIP[p.Metadata.Name], r.oldDep[p.Metadata.Name] = p.Status.PodIP, dep
		}
	}
	return nil
}

// atStopCopies is how many requests at the stop each deployment's old pod
// gets: one ALTO keeps the translator busy past the pre-stop sleep (about
// 20 s of MT calls), while one 50-page PDF (MAX_PDF_PAGES) once took a
// warm classifier 4.5 s, under the 5 s of the sleep, so three PDFs at
// once share its cores.
var atStopCopies = map[string]int{"pageclass-api": 3, "translate-api": 1}

// sendAtStop is the request at the stop: the moment an old pod is told to
// stop, the PDF (or the ALTO) goes straight to it, during its 5 s pre-stop
// sleep, so SIGTERM reaches the process with the request in flight
// whatever the new pod's start took (the requests sent before the restart
// may end before that on a busy machine).
func (r *restartRun) sendAtStop(name string) {
	ip, dep := r.oldIP[name], r.oldDep[name]
	if dep == "pageclass-api" {
		for i := 0; i < atStopCopies[dep]; i++ {
			go func() {
				r.atStop[dep] <- post("http://"+ip+":8000/predict_document", "file", "pages.pdf", "application/pdf", r.pdf, nil, nil)
			}()
		}
	} else {
		go func() {
			r.atStop[dep] <- post("http://"+ip+":8000/translate", "file", "MTX201501307_anon.alto.xml", "application/xml", r.alto, r.trFields, nil)
		}()
	}
}

// startLoad starts the steady stream through each Service and the watcher
// of the old pods.
func (r *restartRun) startLoad() {
	r.atStop = map[string]chan slowResult{}
	for dep, n := range atStopCopies {
		r.atStop[dep] = make(chan slowResult, n)
	}
	r.stop = make(chan struct{})
	r.streams = map[string]*stream{"pageclass-api": {}, "translate-api": {}}
	r.wg.Add(2)
	go r.streams["pageclass-api"].run(r.pcURL, 100*time.Millisecond, r.stop, &r.wg)
	go r.streams["translate-api"].run(r.trURL, 100*time.Millisecond, r.stop, &r.wg)
	r.stopping, r.gone = map[string]time.Time{}, map[string]time.Time{}
	r.watchDone = make(chan struct{})
	go r.watch()
}

// watch follows the old pods until stop is closed: when each is told to
// stop (deletionTimestamp, as the kubelet sees it) and when it is gone.
func (r *restartRun) watch() {
	defer close(r.watchDone)
	for {
		select {
		case <-r.stop:
			return
		case <-time.After(250 * time.Millisecond):
		}
		ps, err := r.d.pods("app.kubernetes.io/name in (pageclass-api,translate-api)")
		if err != nil {
			continue
		}
		r.seen(ps)
	}
}

// seen records what one listing of the pods shows.
func (r *restartRun) seen(ps []pod) {
	seen := map[string]bool{}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range ps {
		seen[p.Metadata.Name] = true
		if p.Metadata.DeletionTimestamp != nil {
			if _, ok := r.stopping[p.Metadata.Name]; !ok {
				r.stopping[p.Metadata.Name] = time.Now()
				if r.oldDep[p.Metadata.Name] != "" {
					r.sendAtStop(p.Metadata.Name)
				}
			}
		}
	}
	for _, names := range r.olds {
		for _, n := range names {
			if _, ok := r.gone[n]; !ok && !seen[n] {
				r.gone[n] = time.Now()
			}
		}
	}
}

// sendSlow sends the slow requests (the copies of the PDF to the
// classifier, the ALTO to the translator) and returns once both are in the
// old pods: the PDFs fully sent, the ALTO already being translated.
func (r *restartRun) sendSlow() error {
	r.results = map[string][]chan slowResult{}
	pcWritten := make(chan time.Time, copies)
	for i := 0; i < copies; i++ {
		ch := make(chan slowResult, 1)
		r.results["pageclass-api"] = append(r.results["pageclass-api"], ch)
		go func() {
			ch <- post(r.pcURL+"/predict_document", "file", "pages.pdf", "application/pdf", r.pdf, nil, pcWritten)
		}()
	}
	mtStarted := r.d.mt.arm()
	trCh := make(chan slowResult, 1)
	r.results["translate-api"] = []chan slowResult{trCh}
	go func() {
		trCh <- post(r.trURL+"/translate", "file", "MTX201501307_anon.alto.xml", "application/xml", r.alto, r.trFields, nil)
	}()
	for i := 0; i < copies; i++ {
		select {
		case <-pcWritten:
		case <-time.After(time.Minute):
			return errors.New("pageclass-api: the PDF was not sent within a minute")
		}
	}
	select {
	case <-mtStarted:
	case <-time.After(time.Minute):
		return errors.New("translate-api: the ALTO request reached no MT call within a minute")
	}
	return nil
}

// waitRollout waits for both rollouts and returns the first error.
func (r *restartRun) waitRollout() error {
	var rolloutErr error
	for _, dep := range []string{"pageclass-api", "translate-api"} {
		if _, err := r.d.kc("rollout", "status", "deployment/"+dep, "--timeout", "5m"); err != nil && rolloutErr == nil {
			rolloutErr = err
		}
	}
	r.rolledAt = time.Now()
	return rolloutErr
}

// collect waits for the slow requests and the requests at the stop.
func (r *restartRun) collect() {
	r.slow = map[string][]slowResult{}
	for dep, chs := range r.results {
		for _, ch := range chs {
			r.slow[dep] = append(r.slow[dep], <-ch)
		}
	}
	r.stopped = map[string]slowResult{}
	for dep, ch := range r.atStop {
		r.stopped[dep] = atStopResult(ch, atStopCopies[dep])
	}
}

// atStopResult waits for the n requests at the stop on ch and returns the
// one the checks judge: the first that failed, else the one answered last.
func atStopResult(ch <-chan slowResult, n int) slowResult {
	var last slowResult
	for i := 0; i < n; i++ {
		select {
		case res := <-ch:
			if res.err != nil || res.status != 200 {
				return res
			}
			if i == 0 || res.doneAt.After(last.doneAt) {
				last = res
			}
		case <-time.After(4 * time.Minute):
			return slowResult{err: errors.New("no request was sent at the stop (the old pod was never seen stopping)")}
		}
	}
	return last
}

// drainAndStop keeps the streams going until every old pod is gone (its
// whole drain is under load) and two seconds more against the new pods
// only, then stops the streams and the watcher.
func (r *restartRun) drainAndStop() {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		n := len(r.gone)
		r.mu.Unlock()
		if n == len(r.olds["pageclass-api"])+len(r.olds["translate-api"]) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // two more seconds of the stream against the new pods only
	close(r.stop)
	r.wg.Wait()
	<-r.watchDone
}

// figures returns a deployment's figures and problems: its stream, its
// old pod, its slow requests and its request at the stop.
func (r *restartRun) figures(dep string) (map[string]any, []string) {
	s := r.streams[dep]
	old := r.olds[dep][0]
	r.mu.Lock()
	stopAt, told := r.stopping[old]
	goneAt, isGone := r.gone[old]
	r.mu.Unlock()
	f := map[string]any{
		"stream_sent":       s.sent.Load(),
		"stream_failed":     s.failed.Load(),
		"stream_retried":    s.retried.Load(),
		"old_pod":           old,
		"old_pod_told_stop": told,
	}
	if isGone && told {
		f["old_pod_stop_to_gone_s"] = secs(goneAt.Sub(stopAt))
	}
	var problems []string
	if s.failed.Load() > 0 {
		problems = append(problems, fmt.Sprintf("%s: %d of %d stream requests failed: %s", dep, s.failed.Load(), s.sent.Load(), strings.Join(s.errs, "; ")))
	}
	if !told {
		problems = append(problems, fmt.Sprintf("%s: the old pod %s was never seen stopping", dep, old))
	}
	if !isGone {
		problems = append(problems, fmt.Sprintf("%s: the old pod %s was still there two minutes after the rollout", dep, old))
	}
	statuses, longest, p := r.slowFigures(dep, f, stopAt, told)
	problems = append(problems, p...)
	// The request sent at the stop: written before SIGTERM, answered
	// after it.
	res := r.stopped[dep]
	sigterm := stopAt.Add(preStop)
	problems = append(problems, r.atStopFigures(dep, f, res, sigterm, told)...)
	fmt.Printf("k8se2e: %s: stream %d sent, %d failed, %d answered 503 by the draining pod and retried; slow requests before the restart %v, the longest %.1f s; the request at the stop %d after %.1f s, %.1f s of it after SIGTERM reached the pod\n",
		dep, s.sent.Load(), s.failed.Load(), s.retried.Load(), statuses, secs(longest.duration), res.status, secs(res.duration), secs(res.doneAt.Sub(sigterm)))
	return f, problems
}

// slowFigures adds to f the figures of a deployment's slow requests sent
// before the restart and returns their statuses, the longest and the
// problems.
func (r *restartRun) slowFigures(dep string, f map[string]any, stopAt time.Time, told bool) ([]int, slowResult, []string) {
	var longest slowResult
	var statuses []int
	var problems []string
	for _, res := range r.slow[dep] {
		statuses = append(statuses, res.status)
		if res.duration > longest.duration {
			longest = res
		}
		if res.err != nil || res.status != 200 {
			problems = append(problems, fmt.Sprintf("%s: a slow request failed: status %d, %v: %.300s", dep, res.status, res.err, res.body))
		} else if err := checkSlow(dep, res.body, len(r.pages)); err != nil {
			problems = append(problems, err.Error())
		}
	}
	f["slow_requests"] = len(r.slow[dep])
	f["slow_statuses"] = statuses
	f["longest_slow_request_s"] = secs(longest.duration)
	if told {
		f["longest_in_flight_after_stop_s"] = secs(longest.doneAt.Sub(stopAt))
	}
	return statuses, longest, problems
}

// atStopFigures adds to f the figures of the request sent to the old pod
// at its stop (res) and returns its problems: it must have been written
// before SIGTERM and answered, in full, after it.
func (r *restartRun) atStopFigures(dep string, f map[string]any, res slowResult, sigterm time.Time, told bool) []string {
	f["at_stop_status"] = res.status
	f["at_stop_request_s"] = secs(res.duration)
	switch {
	case res.err != nil || res.status != 200:
		return []string{fmt.Sprintf("%s: the request sent to the old pod at its stop failed: status %d, %v: %.300s", dep, res.status, res.err, res.body)}
	case !told || !res.sentAt.Before(sigterm):
		return []string{fmt.Sprintf("%s: the request at the stop was written %.1f s after SIGTERM reached the pod, so it tested nothing", dep, secs(res.sentAt.Sub(sigterm)))}
	case !res.doneAt.After(sigterm):
		return []string{fmt.Sprintf("%s: the request at the stop ended %.1f s before SIGTERM reached the pod, so the drain did not hold it", dep, secs(sigterm.Sub(res.doneAt)))}
	}
	f["at_stop_in_flight_after_sigterm_s"] = secs(res.doneAt.Sub(sigterm))
	if err := checkSlow(dep, res.body, len(r.pages)); err != nil {
		return []string{"at the stop: " + err.Error()}
	}
	return nil
}

// checkSlow checks the body of a slow request: every page of the PDF
// classified; the ALTO well-formed XML.
func checkSlow(dep string, body []byte, pages int) error {
	switch dep {
	case "pageclass-api":
		var doc struct {
			PageCount int `json:"page_count"`
			Pages     []struct {
				Predictions []struct {
					Label string `json:"label"`
				} `json:"predictions"`
			} `json:"pages"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			return fmt.Errorf("pageclass-api: /predict_document answer is not JSON: %v", err)
		}
		if doc.PageCount != pages || len(doc.Pages) != pages {
			return fmt.Errorf("pageclass-api: /predict_document: page_count %d, %d pages, want %d", doc.PageCount, len(doc.Pages), pages)
		}
		for i, p := range doc.Pages {
			if len(p.Predictions) == 0 || p.Predictions[0].Label == "" {
				return fmt.Errorf("pageclass-api: /predict_document: page %d has no prediction", i+1)
			}
		}
	case "translate-api":
		dec := xml.NewDecoder(bytes.NewReader(body))
		strs := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("translate-api: /translate answer is not well-formed XML: %v", err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "String" {
				strs++
			}
		}
		if strs == 0 {
			return errors.New("translate-api: /translate answer has no ALTO String")
		}
	}
	return nil
}

// setEnv edits a Deployment: the container's environment variables and
// its port, then replaces it.
func (d *driver) setEnv(dep string, env map[string]string, port int) error {
	out, err := d.kc("get", "deployment", dep, "-o", "json")
	if err != nil {
		return err
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		return err
	}
	c := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["ports"].([]any)[0].(map[string]any)["containerPort"] = port
	vars, _ := c["env"].([]any)
	left := map[string]string{}
	for k, v := range env {
		left[k] = v
	}
	for _, v := range vars {
		m := v.(map[string]any)
		if val, ok := left[m["name"].(string)]; ok {
			m["value"] = val
			delete(m, "valueFrom")
			delete(left, m["name"].(string))
		}
	}
	for k, v := range left {
		vars = append(vars, map[string]any{"name": k, "value": v})
	}
	c["env"] = vars
	b, _ := json.Marshal(obj)
	_, err = d.kcIn(b, "replace", "-f", "-")
	return err
}

// waitOnlyNew waits until the Deployment's only pod is one not being
// deleted.
func (d *driver) waitOnlyNew(dep string) error {
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		ps, err := d.pods("app.kubernetes.io/name=" + dep)
		if err != nil {
			return err
		}
		if len(ps) == 1 && ps[0].Metadata.DeletionTimestamp == nil {
			return nil
		}
	}
	return fmt.Errorf("%s: the old pod was still there two minutes after the rollout", dep)
}

// config is step 4 of spec 9's acceptance, for both services.
func (d *driver) config() error {
	const allowed, refused = "http://allowed.example", "http://refused.example"
	env := map[string]string{"PORT": "9000", "LOG_LEVEL": "DEBUG", "ALLOWED_ORIGINS": allowed, "MAX_UPLOAD_MB": "1"}
	for _, dep := range []string{"pageclass-api", "translate-api"} {
		if err := d.setEnv(dep, env, 9000); err != nil {
			return err
		}
	}
	for _, dep := range []string{"pageclass-api", "translate-api"} {
		if _, err := d.kc("rollout", "status", "deployment/"+dep, "--timeout", "5m"); err != nil {
			return err
		}
		// The old pod drains for a while after the rollout is complete:
		// the checks below are for the new process only.
		if err := d.waitOnlyNew(dep); err != nil {
			return err
		}
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 2*1024*1024/16) // 2 MiB
	var problems []string
	figures := map[string]any{}
	client := &http.Client{Timeout: 20 * time.Second}
	for _, dep := range []string{"pageclass-api", "translate-api"} {
		f := map[string]any{}
		figures[dep] = f
		base, err := d.serviceURL(dep)
		if err != nil {
			return err
		}
		ps, err := d.pods("app.kubernetes.io/name=" + dep)
		if err != nil {
			return err
		}
		var ip, name string
		for _, p := range ps {
			if p.Metadata.DeletionTimestamp == nil && p.Status.Phase == "Running" {
				ip, name = p.Status.PodIP, p.Metadata.Name
			}
		}
		if ip == "" {
			return fmt.Errorf("%s: no running pod after the change", dep)
		}
		// PORT: the pod answers on 9000 and not on 8000; the Service's
		// named target port follows.
		if resp, err := client.Get("http://" + ip + ":9000/health"); err != nil || resp.StatusCode != 200 {
			problems = append(problems, fmt.Sprintf("%s: PORT=9000: pod %s does not answer /health on 9000: %v", dep, ip, err))
		} else {
			resp.Body.Close()
			f["port_9000"] = "pod answers /health on 9000"
		}
		if _, err := (&net.Dialer{Timeout: 3 * time.Second}).Dial("tcp", ip+":8000"); err == nil {
			problems = append(problems, fmt.Sprintf("%s: PORT=9000: pod still accepts connections on 8000", dep))
		} else {
			f["port_8000"] = "refused: " + err.Error()
		}
		if _, err := d.kc("exec", name, "--", "/opt/archivekit/bin/healthcheck"); err != nil {
			problems = append(problems, fmt.Sprintf("%s: PORT=9000: the healthcheck inside the pod failed: %v", dep, err))
		} else {
			f["healthcheck_port_9000"] = "passes inside the pod"
		}
		// CORS through the Service.
		for _, o := range []string{allowed, refused} {
			req, _ := http.NewRequest("GET", base+"/info", nil)
			req.Header.Set("Origin", o)
			resp, err := client.Do(req)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: GET /info through the Service: %v", dep, err))
				continue
			}
			resp.Body.Close()
			acao := resp.Header.Get("Access-Control-Allow-Origin")
			if o == allowed && acao != allowed {
				problems = append(problems, fmt.Sprintf("%s: ALLOWED_ORIGINS=%s: origin %s answered Access-Control-Allow-Origin %q", dep, allowed, o, acao))
			}
			if o == refused && acao != "" {
				problems = append(problems, fmt.Sprintf("%s: ALLOWED_ORIGINS=%s: origin %s answered Access-Control-Allow-Origin %q", dep, allowed, o, acao))
			}
			f["origin "+o] = fmt.Sprintf("status %d, Access-Control-Allow-Origin %q", resp.StatusCode, acao)
		}
		// MAX_UPLOAD_MB=1: a 2 MiB upload is refused with 413.
		var r slowResult
		if dep == "pageclass-api" {
			r = post(base+"/predict_image", "file", "big.png", "image/png", big, nil, nil)
		} else {
			r = post(base+"/translate", "file", "big.xml", "application/xml", big, nil, nil)
		}
		f["upload_2MiB_status"] = r.status
		if r.status != http.StatusRequestEntityTooLarge {
			problems = append(problems, fmt.Sprintf("%s: MAX_UPLOAD_MB=1: a 2 MiB upload answered %d (%v), want 413", dep, r.status, r.err))
		}
		// LOG_LEVEL=DEBUG: the probes' request records are DEBUG; wait for
		// the next readiness probe to log one (every 5 s).
		var logs string
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
			logs, _ = d.kc("logs", name)
			if strings.Contains(logs, `"level":"DEBUG"`) {
				break
			}
		}
		n := strings.Count(logs, `"level":"DEBUG"`)
		f["debug_records"] = n
		if n == 0 {
			problems = append(problems, fmt.Sprintf("%s: LOG_LEVEL=DEBUG: no DEBUG record in the pod's log", dep))
		}
	}
	d.report["config"] = figures
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	fmt.Println("k8se2e: PORT=9000, LOG_LEVEL=DEBUG, ALLOWED_ORIGINS (accepted and refused), MAX_UPLOAD_MB=1 (413) reach both processes")
	return nil
}

// batch is the Indexed Job part: the inputs on the batch volume, both Jobs
// applied, each index's outcome checked.
func (d *driver) batch() error {
	vol := filepath.Join(d.volumes, "archivekit-batch")
	chosen, err := d.batchPages(vol)
	if err != nil {
		return err
	}
	perShard, failIndex, err := d.batchALTOs(vol)
	if err != nil {
		return err
	}
	d.mt.delay.Store(0)
	refusedBefore := d.mt.refused.Load()
	d.mt.blocked.Store(true)
	defer d.unblockAfterFailedPod()()

	t := time.Now()
	if _, err := d.kc("apply", "-k", batchDir); err != nil {
		return err
	}
	done, took, err := d.waitJobs(t)
	if err != nil {
		return err
	}
	figures := map[string]any{}
	var problems []string
	for _, name := range []string{"pageclass-shards", "translate-shards"} {
		f, p, err := d.jobFigures(name, done[name], took[name])
		if err != nil {
			return err
		}
		figures[name] = f
		problems = append(problems, p...)
	}
	// The translator's retried index: one failed pod, then a success; the
	// other indexes one pod each.
	trPods := figures["translate-shards"].(map[string]any)["pods_per_index"].(map[string]map[string]int)
	for idx, phases := range trPods {
		want := map[string]int{"Succeeded": 1}
		if idx == fmt.Sprint(failIndex) {
			want = map[string]int{"Succeeded": 1, "Failed": 1}
		}
		if fmt.Sprint(phases) != fmt.Sprint(want) {
			problems = append(problems, fmt.Sprintf("translate-shards: index %s pods %v, want %v", idx, phases, want))
		}
	}
	refused := d.mt.refused.Load() - refusedBefore
	if refused == 0 {
		problems = append(problems, "the stand-in refused no call: the marked document was not sent")
	}
	want, p := batchOutputs(vol, perShard, len(chosen))
	problems = append(problems, p...)
	figures["pages"] = len(chosen)
	figures["alto_documents"] = want
	figures["translate_retried_index"] = failIndex
	figures["mt_calls_refused"] = refused
	d.report["batch"] = figures
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// batchPages makes the batch volume's folders and puts 16 sample pages
// (one or two per category) in its input; it returns them.
func (d *driver) batchPages(vol string) ([]string, error) {
	for _, sub := range []string{"input", "model", "output", "output/pageclass", "output/translate"} {
		if err := mkdirOwned(filepath.Join(vol, sub)); err != nil {
			return nil, err
		}
	}
	pages, err := samplePages(filepath.Join(d.shared, "data", "pages"))
	if err != nil {
		return nil, err
	}
	var chosen []string
	for i := 0; i < len(pages) && len(chosen) < 16; i += len(pages) / 16 {
		chosen = append(chosen, pages[i])
	}
	for i, p := range chosen {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("%s-%02d.png", filepath.Base(filepath.Dir(p)), i)
		if err := os.WriteFile(filepath.Join(vol, "input", name), b, 0o644); err != nil {
			return nil, err
		}
	}
	return chosen, nil
}

// batchALTOs puts the ALTO documents in the batch volume's input: two in
// each of shards 0, 1 and 3 of 4, and one alone in shard 2 with the marker
// the stand-in refuses until that index has failed once: the shard
// translates nothing on its first attempt (exit 3), and its index alone is
// retried. It returns the documents of each shard and the failing index.
func (d *driver) batchALTOs(vol string) (map[int][]string, int, error) {
	alto, err := os.ReadFile(d.altoPath())
	if err != nil {
		return nil, -1, err
	}
	marked := bytes.Replace(alto, []byte(`CONTENT="`), []byte(`CONTENT="`+failMarker+" "), 1)
	if bytes.Equal(marked, alto) {
		return nil, -1, errors.New("the sample ALTO has no CONTENT attribute to mark")
	}
	perShard := map[int][]string{}
	var failIndex = -1
	for i := 0; len(perShard[0]) < 2 || len(perShard[1]) < 2 || len(perShard[3]) < 2 || failIndex < 0; i++ {
		name := fmt.Sprintf("doc-%03d.alto.xml", i)
		s := shardOf(name, 4)
		var data []byte
		switch {
		case s == 2 && failIndex < 0:
			failIndex = 2
			data = marked
		case s != 2 && len(perShard[s]) < 2:
			data = alto
		}
		if data != nil {
			perShard[s] = append(perShard[s], name)
			if err := os.WriteFile(filepath.Join(vol, "input", name), data, 0o644); err != nil {
				return nil, -1, err
			}
		}
		if i > 1000 {
			return nil, -1, errors.New("could not place the ALTO documents in the four shards")
		}
	}
	return perShard, failIndex, nil
}

// shardOf is the index of the shard of n that holds the input name (-1 if
// none; the last if several, as a loop over the shards finds it).
func shardOf(name string, n int) int {
	s := -1
	for k := 0; k < n; k++ {
		if (shard.Spec{Index: k, Count: n}).Has(shard.Key("", name)) {
			s = k
		}
	}
	return s
}

// unblockAfterFailedPod lets the stand-in answer the marked document once
// an index of the translator's Job has a failed pod; the function it
// returns stops the watch and unblocks the stand-in.
func (d *driver) unblockAfterFailedPod() func() {
	quit, unblocked := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(unblocked)
		for {
			select {
			case <-quit:
				return
			case <-time.After(time.Second):
			}
			ps, err := d.pods("job-name=translate-shards")
			if err != nil {
				continue
			}
			for _, p := range ps {
				if p.Status.Phase == "Failed" {
					d.mt.blocked.Store(false)
					return
				}
			}
		}
	}()
	return func() { close(quit); <-unblocked; d.mt.blocked.Store(false) }
}

// job is the part of a Job's status the batch step reads.
type job struct {
	Status struct {
		Succeeded      int        `json:"succeeded"`
		Failed         int        `json:"failed"`
		FailedIndexes  *string    `json:"failedIndexes"`
		StartTime      *time.Time `json:"startTime"`
		CompletionTime *time.Time `json:"completionTime"`
		Conditions     []struct {
			Type, Status, Reason, Message string
		} `json:"conditions"`
	} `json:"status"`
}

// waitJobs waits (8 minutes at most) until both Jobs are complete and
// returns each one's status and its seconds since t; a failed Job is an
// error.
func (d *driver) waitJobs(t time.Time) (map[string]job, map[string]float64, error) {
	done := map[string]job{}
	took := map[string]float64{}
	for end := time.Now().Add(8 * time.Minute); len(done) < 2; time.Sleep(time.Second) {
		if time.Now().After(end) {
			return nil, nil, fmt.Errorf("the Jobs did not finish in 8 minutes (finished: %d)", len(done))
		}
		for _, name := range []string{"pageclass-shards", "translate-shards"} {
			if _, ok := done[name]; ok {
				continue
			}
			j, complete, err := d.jobState(name)
			if err != nil {
				return nil, nil, err
			}
			if complete {
				done[name] = j
				took[name] = secs(time.Since(t))
			}
		}
	}
	return done, took, nil
}

// jobState reads a Job's status: complete, or an error when it failed.
func (d *driver) jobState(name string) (job, bool, error) {
	var j job
	out, err := d.kc("get", "job", name, "-o", "json")
	if err != nil {
		return j, false, err
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		return j, false, err
	}
	complete := false
	for _, c := range j.Status.Conditions {
		if c.Status != "True" {
			continue
		}
		switch c.Type {
		case "Complete":
			complete = true
		case "Failed":
			return j, false, fmt.Errorf("job %s failed: %s: %s", name, c.Reason, c.Message)
		}
	}
	return j, complete, nil
}

// jobFigures returns a finished Job's figures (its pods per index among
// them) and problems: every index must have succeeded.
func (d *driver) jobFigures(name string, j job, took float64) (map[string]any, []string, error) {
	ps, err := d.pods("job-name=" + name)
	if err != nil {
		return nil, nil, err
	}
	perIndex := map[string]map[string]int{}
	for _, p := range ps {
		idx := p.Metadata.Labels["batch.kubernetes.io/job-completion-index"]
		if perIndex[idx] == nil {
			perIndex[idx] = map[string]int{}
		}
		perIndex[idx][p.Status.Phase]++
	}
	f := map[string]any{
		"apply_to_complete_s": took,
		"succeeded":           j.Status.Succeeded,
		"failed_pods":         j.Status.Failed,
		"pods_per_index":      perIndex,
	}
	if j.Status.StartTime != nil && j.Status.CompletionTime != nil {
		f["start_to_completion_s"] = j.Status.CompletionTime.Sub(*j.Status.StartTime).Seconds()
	}
	var problems []string
	if j.Status.Succeeded != 4 {
		problems = append(problems, fmt.Sprintf("%s: %d indexes succeeded, want 4", name, j.Status.Succeeded))
	}
	if j.Status.FailedIndexes != nil && *j.Status.FailedIndexes != "" {
		problems = append(problems, fmt.Sprintf("%s: failed indexes %s", name, *j.Status.FailedIndexes))
	}
	fmt.Printf("k8se2e: %s complete %.1f s after apply; pods per index: %v\n", name, took, perIndex)
	return f, problems, nil
}

// batchOutputs checks the Jobs' outputs: every document translated exactly
// once, every page classified once. It returns the number of documents.
func batchOutputs(vol string, perShard map[int][]string, pages int) (int, []string) {
	var problems []string
	outs, _ := filepath.Glob(filepath.Join(vol, "output", "translate", "*_en.alto.xml"))
	var want int
	for _, names := range perShard {
		want += len(names)
	}
	if len(outs) != want {
		problems = append(problems, fmt.Sprintf("translate-shards: %d translated documents, want %d", len(outs), want))
	}
	rows, err := countPageRows(filepath.Join(vol, "output", "pageclass"))
	if err != nil {
		problems = append(problems, err.Error())
	} else if rows != pages {
		problems = append(problems, fmt.Sprintf("pageclass-shards: %d page rows in the shards' tables, want %d", rows, pages))
	}
	return want, problems
}

// countPageRows counts the rows of the shards' ensemble tables
// ({stamp}_BEST_{n}_models_AVG_TOP-{N}.csv, one per shard), header lines
// excluded.
func countPageRows(dir string) (int, error) {
	var n, tables int
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".csv") || !strings.Contains(filepath.Base(p), "_AVG_TOP-") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		tables++
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		n += len(lines) - 1
		return nil
	})
	if err == nil && tables == 0 {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		err = fmt.Errorf("pageclass-shards: no *_AVG_TOP-*.csv table under %s: %v", dir, files)
	}
	return n, err
}
