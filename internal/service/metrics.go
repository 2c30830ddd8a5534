package service

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Metrics collects the service's Prometheus metrics and writes them in the
// text exposition format (version 0.0.4) at GET /metrics. It is written here
// rather than taken from client_golang to keep the dependency set small; it
// supports exactly the counters, gauges and histograms the services expose:
//
//	http_requests_total{method,path,status}          counter
//	http_request_duration_seconds{method,path}       histogram
//	http_requests_in_flight                          gauge (work requests, probes excluded)
//	service_state{state}                             gauge (1 for the current state)
//	service_warmup_seconds                           gauge
//	inference_batch_size                             histogram (ObserveBatch)
//	inference_queue_wait_seconds                     histogram (ObserveQueueWait)
//	model_load_seconds{model}                        gauge (SetModelLoadTime)
//
// plus the counters a service declares for its own work (DeclareCounter,
// AddCount), such as pages classified by category, and the gauges
// (DeclareGauge, read when /metrics is served) and histograms
// (DeclareHistogram, Observe) of its parts, such as its job queue.
//
// path is the route pattern (for example "/predict_image"), never the raw
// URL, and "unmatched" for requests no route matched, so label values stay
// bounded. All methods are safe for concurrent use.
type Metrics struct {
	mu        sync.Mutex
	requests  map[[3]string]float64
	durations map[[2]string]*histogram
	batch     *histogram
	queueWait *histogram
	batching  bool // the histograms above are written (Options.Batching)
	modelLoad map[string]float64
	warmup    float64
	counters  map[string]*counter
	gauges    map[string]*gauge
	hists     map[string]*namedHistogram

	inFlight func() int64
	state    func() State
}

// Bucket bounds of the histograms.
var (
	durationBuckets  = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	batchBuckets     = []float64{1, 2, 4, 8, 16, 32, 64}
	queueWaitBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
)

type histogram struct {
	bounds []float64
	counts []uint64 // per bucket, not cumulative; len(bounds)+1 with +Inf last
	sum    float64
	count  uint64
}

// counter is a counter a service declared, with at most one label.
type counter struct {
	help, label string
	values      map[string]float64 // by label value ("" without a label)
}

// gauge is a gauge a service declared, read when the metrics are written.
type gauge struct {
	help, label string
	read        func() map[string]float64
}

// namedHistogram is a histogram a service declared.
type namedHistogram struct {
	help string
	h    *histogram
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v
	h.counts[i]++
	h.sum += v
	h.count++
}

func newMetrics(inFlight func() int64, state func() State) *Metrics {
	return &Metrics{
		requests:  map[[3]string]float64{},
		durations: map[[2]string]*histogram{},
		batch:     newHistogram(batchBuckets),
		queueWait: newHistogram(queueWaitBuckets),
		modelLoad: map[string]float64{},
		counters:  map[string]*counter{},
		gauges:    map[string]*gauge{},
		hists:     map[string]*namedHistogram{},
		inFlight:  inFlight,
		state:     state,
	}
}

// ObserveBatch records the size of one batch sent to a model.
func (m *Metrics) ObserveBatch(n int) {
	m.mu.Lock()
	m.batch.observe(float64(n))
	m.mu.Unlock()
}

// ObserveQueueWait records how long one item waited before its batch ran.
func (m *Metrics) ObserveQueueWait(d time.Duration) {
	m.mu.Lock()
	m.queueWait.observe(d.Seconds())
	m.mu.Unlock()
}

// DeclareCounter registers the counter name (a Prometheus metric name ending
// in _total) with its help text and its one label (label "" for none), so
// /metrics shows it before anything is counted: an unlabelled counter as 0.
// Declaring a name again replaces its help and label and keeps its counts.
func (m *Metrics) DeclareCounter(name, help, label string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counters[name]
	if c == nil {
		c = &counter{values: map[string]float64{}}
		m.counters[name] = c
	}
	c.help, c.label = help, label
	if label == "" {
		c.values[""] += 0
	}
}

// AddCount adds n to the counter name for the label value (ignored for a
// counter without a label). A name never declared is declared without help
// text, with a label "value" when value is not empty. Callers keep label
// values bounded (category names, not file names).
func (m *Metrics) AddCount(name, value string, n float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counters[name]
	if c == nil {
		c = &counter{help: name, values: map[string]float64{}}
		if value != "" {
			c.label = "value"
		}
		m.counters[name] = c
	}
	if c.label == "" {
		value = ""
	}
	c.values[value] += n
}

// DeclareGauge registers the gauge name with its help text and its one
// label (label "" for none: read's value under the key ""); read gives its
// values by label value each time the metrics are written, outside the
// metrics' lock (it may query a database; it should be quick).
func (m *Metrics) DeclareGauge(name, help, label string, read func() map[string]float64) {
	m.mu.Lock()
	m.gauges[name] = &gauge{help: help, label: label, read: read}
	m.mu.Unlock()
}

// DeclareHistogram registers the histogram name with its help text and
// its bucket bounds (ascending); declaring it again keeps its observations.
func (m *Metrics) DeclareHistogram(name, help string, bounds []float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hists[name] == nil {
		m.hists[name] = &namedHistogram{h: newHistogram(bounds)}
	}
	m.hists[name].help = help
}

// Observe records v in the histogram name (ignored when not declared).
func (m *Metrics) Observe(name string, v float64) {
	m.mu.Lock()
	if h := m.hists[name]; h != nil {
		h.h.observe(v)
	}
	m.mu.Unlock()
}

// SetModelLoadTime records how long loading (and warming) model took.
func (m *Metrics) SetModelLoadTime(model string, d time.Duration) {
	m.mu.Lock()
	m.modelLoad[model] = d.Seconds()
	m.mu.Unlock()
}

func (m *Metrics) setWarmup(d time.Duration) {
	m.mu.Lock()
	m.warmup = d.Seconds()
	m.mu.Unlock()
}

// observeRequest records one finished request.
func (m *Metrics) observeRequest(method, path string, status int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[[3]string{method, path, strconv.Itoa(status)}]++
	k := [2]string{method, path}
	h := m.durations[k]
	if h == nil {
		h = newHistogram(durationBuckets)
		m.durations[k] = h
	}
	h.observe(d.Seconds())
}

// ServeHTTP writes the metrics in the Prometheus text format.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_ = m.Write(w)
}

// Write writes the metrics in the Prometheus text format to w, series in a
// stable order.
func (m *Metrics) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m.mu.Lock()
	gauges := maps.Clone(m.gauges)
	m.mu.Unlock()
	read := make(map[string]map[string]float64, len(gauges))
	for n, g := range gauges {
		read[n] = g.read()
	}
	m.mu.Lock()
	defer m.mu.Unlock()

	header(bw, "http_requests_total", "counter", "HTTP requests answered, by method, route and status.")
	rk := make([][3]string, 0, len(m.requests))
	for k := range m.requests {
		rk = append(rk, k)
	}
	sort.Slice(rk, func(i, j int) bool { return lessStrings(rk[i][:], rk[j][:]) })
	for _, k := range rk {
		sample(bw, "http_requests_total", labels("method", k[0], "path", k[1], "status", k[2]), m.requests[k])
	}

	header(bw, "http_request_duration_seconds", "histogram", "Time to answer HTTP requests, by method and route.")
	dk := make([][2]string, 0, len(m.durations))
	for k := range m.durations {
		dk = append(dk, k)
	}
	sort.Slice(dk, func(i, j int) bool { return lessStrings(dk[i][:], dk[j][:]) })
	for _, k := range dk {
		writeHistogram(bw, "http_request_duration_seconds", labels("method", k[0], "path", k[1]), m.durations[k])
	}

	header(bw, "http_requests_in_flight", "gauge", "Work requests being served now (probes excluded).")
	sample(bw, "http_requests_in_flight", "", float64(m.inFlight()))

	header(bw, "service_state", "gauge", "Lifecycle state: 1 for the current one.")
	cur := m.state()
	for _, s := range []State{Starting, Ready, Draining} {
		v := 0.0
		if s == cur {
			v = 1
		}
		sample(bw, "service_state", labels("state", s.String()), v)
	}

	header(bw, "service_warmup_seconds", "gauge", "Duration of the warm-up that ran before the service became ready.")
	sample(bw, "service_warmup_seconds", "", m.warmup)

	if m.batching {
		header(bw, "inference_batch_size", "histogram", "Items per batch sent to a model.")
		writeHistogram(bw, "inference_batch_size", "", m.batch)

		header(bw, "inference_queue_wait_seconds", "histogram", "Time an item waited for its batch to run.")
		writeHistogram(bw, "inference_queue_wait_seconds", "", m.queueWait)
	}

	header(bw, "model_load_seconds", "gauge", "Time taken to load and warm each model.")
	mk := make([]string, 0, len(m.modelLoad))
	for k := range m.modelLoad {
		mk = append(mk, k)
	}
	sort.Strings(mk)
	for _, k := range mk {
		sample(bw, "model_load_seconds", labels("model", k), m.modelLoad[k])
	}

	for _, n := range slices.Sorted(maps.Keys(m.counters)) {
		c := m.counters[n]
		header(bw, n, "counter", c.help)
		for _, v := range slices.Sorted(maps.Keys(c.values)) {
			lbls := ""
			if c.label != "" {
				lbls = labels(c.label, v)
			}
			sample(bw, n, lbls, c.values[v])
		}
	}
	for _, n := range slices.Sorted(maps.Keys(gauges)) {
		g := gauges[n]
		header(bw, n, "gauge", g.help)
		for _, v := range slices.Sorted(maps.Keys(read[n])) {
			lbls := ""
			if g.label != "" {
				lbls = labels(g.label, v)
			}
			sample(bw, n, lbls, read[n][v])
		}
	}
	for _, n := range slices.Sorted(maps.Keys(m.hists)) {
		header(bw, n, "histogram", m.hists[n].help)
		writeHistogram(bw, n, "", m.hists[n].h)
	}
	return bw.Flush()
}

func lessStrings(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func header(w *bufio.Writer, name, typ, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func sample(w *bufio.Writer, name, lbls string, v float64) {
	if lbls != "" {
		lbls = "{" + lbls + "}"
	}
	fmt.Fprintf(w, "%s%s %s\n", name, lbls, formatFloat(v))
}

func writeHistogram(w *bufio.Writer, name, lbls string, h *histogram) {
	sep := ""
	if lbls != "" {
		sep = ","
	}
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		sample(w, name+"_bucket", lbls+sep+labels("le", formatFloat(b)), float64(cum))
	}
	cum += h.counts[len(h.bounds)]
	sample(w, name+"_bucket", lbls+sep+labels("le", "+Inf"), float64(cum))
	sample(w, name+"_sum", lbls, h.sum)
	sample(w, name+"_count", lbls, float64(h.count))
}

// labels renders name="value" pairs, escaping values as the format requires.
func labels(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(kv[i+1]))
		b.WriteByte('"')
	}
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// declareProcessMetrics declares the gauges a standard dashboard looks for:
// the version the service runs (service_build_info, 1 under its version
// label), when the process started (process_start_time_seconds, since
// the Unix epoch) and its resident memory (process_resident_memory_bytes,
// from /proc; absent where it cannot be read). There were none: a restart
// and a version rolled out showed only as counters falling to zero.
func (s *Service) declareProcessMetrics(start time.Time) {
	version := s.opts.Version
	if version == "" {
		version = "unknown"
	}
	s.Metrics.DeclareGauge("service_build_info", "The version the service runs: 1 under its version label.", "version",
		func() map[string]float64 { return map[string]float64{version: 1} })
	started := float64(start.UnixNano()) / 1e9
	s.Metrics.DeclareGauge("process_start_time_seconds", "When the process started, in seconds since the Unix epoch.", "",
		func() map[string]float64 { return map[string]float64{"": started} })
	s.Metrics.DeclareGauge("process_resident_memory_bytes", "Resident memory of the process, in bytes.", "",
		func() map[string]float64 {
			rss, err := ProcessRSS()
			if err != nil {
				return nil
			}
			return map[string]float64{"": float64(rss)}
		})
}
