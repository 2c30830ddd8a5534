package deploy

import (
	"fmt"
	"maps"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The rules of the deploy/ review of 2026-11-30 (docs/deployment.md,
// "Network policies", "Resources", "Labels"): default deny and explicit
// egress for every pod, ephemeral storage bounded everywhere, the
// classifier's CPU limit tied to its decoder processes, the translator's
// memory request near its working set, bounded batch Jobs, and the
// recommended labels on every object.

// podOf is a pod template as the network, storage and label checks see it.
type podOf struct {
	kind, name string
	labels     map[string]string
	spec       *corev1.PodSpec
}

func (p podOf) String() string { return p.kind + " " + p.name }

// podsOf lists the pod templates of a rendering's workloads, sorted.
func podsOf(objs []runtime.Object) []podOf {
	var ps []podOf
	for _, obj := range objs {
		switch x := obj.(type) {
		case *appsv1.Deployment:
			ps = append(ps, podOf{"Deployment", x.Name, x.Spec.Template.Labels, &x.Spec.Template.Spec})
		case *appsv1.StatefulSet:
			ps = append(ps, podOf{"StatefulSet", x.Name, x.Spec.Template.Labels, &x.Spec.Template.Spec})
		case *batchv1.Job:
			ps = append(ps, podOf{"Job", x.Name, x.Spec.Template.Labels, &x.Spec.Template.Spec})
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].String() < ps[j].String() })
	return ps
}

// needsOutside says which pods call hosts outside the cluster (the MT
// service, the LLM API, the model hub, IIIF and METS hosts, callbacks):
// the two services and the batch Jobs. The database calls nobody.
func needsOutside(p podOf) bool {
	return p.kind == "Job" || (p.kind == "Deployment" && slices.Contains(serviceNames, p.name))
}

// internalRanges are the cluster-internal, private, shared, link-local and
// loopback ranges that egress to outside hosts must leave out: pods,
// Services and nodes live in them, and so does the cloud's metadata
// address (169.254.169.254).
var internalRanges = []string{
	"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "127.0.0.0/8",
	"fc00::/7", "fe80::/10", "::1/128",
	// their NAT64 forms (RFC 6052: 64:ff9b::/96 and the IPv4 address), and
	// NAT64's local-use prefix: on an IPv6-only cluster they reach them
	"64:ff9b::a00:0/104", "64:ff9b::ac10:0/108", "64:ff9b::c0a8:0/112", "64:ff9b::6440:0/106",
	"64:ff9b::a9fe:0/112", "64:ff9b::7f00:0/104", "64:ff9b:1::/48",
}

// outsidePorts are the ports outside hosts are reached on by default.
var outsidePorts = map[int32]bool{80: true, 443: true}

// contains says whether prefix a holds all of prefix b.
func contains(a, b netip.Prefix) bool {
	return a.Addr().Is4() == b.Addr().Is4() && a.Bits() <= b.Bits() && a.Contains(b.Addr())
}

func policySelects(np *networkingv1.NetworkPolicy, podLabels map[string]string) bool {
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	return err == nil && sel.Matches(labels.Set(podLabels))
}

func hasType(np *networkingv1.NetworkPolicy, t networkingv1.PolicyType) bool {
	return slices.Contains(np.Spec.PolicyTypes, t)
}

// isKubeDNS: the peer is the cluster DNS (pods k8s-app=kube-dns in the
// namespace kube-system).
func isKubeDNS(p networkingv1.NetworkPolicyPeer) bool {
	return p.NamespaceSelector != nil && p.PodSelector != nil && p.IPBlock == nil &&
		p.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] == "kube-system" &&
		p.PodSelector.MatchLabels["k8s-app"] == "kube-dns"
}

func hasRulePort(r networkingv1.NetworkPolicyEgressRule, proto corev1.Protocol, port int32) bool {
	for _, p := range r.Ports {
		pr := corev1.ProtocolTCP
		if p.Protocol != nil {
			pr = *p.Protocol
		}
		if pr == proto && p.Port != nil && p.Port.IntValue() == int(port) {
			return true
		}
	}
	return false
}

// checkNetwork holds for every pod of a rendering: a default deny of
// ingress and egress selects it; it may reach the cluster DNS; the two
// services and the Jobs may reach outside hosts on 443 (0.0.0.0/0 less the
// internal ranges), the database may not; a Job's pod admits no ingress.
// And for every egress rule: it names its destinations and its ports, and
// an address block leaves out every internal range it spans.
func checkNetwork(pods []podOf, netpols []*networkingv1.NetworkPolicy) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for _, np := range netpols {
		for _, r := range np.Spec.Egress {
			if len(r.To) == 0 {
				fail("NetworkPolicy %s: an egress rule without \"to\" opens every destination", np.Name)
			}
			if len(r.Ports) == 0 {
				fail("NetworkPolicy %s: an egress rule without ports opens every port", np.Name)
			}
			for _, peer := range r.To {
				if peer.IPBlock == nil {
					continue
				}
				cidr, err := netip.ParsePrefix(peer.IPBlock.CIDR)
				if err != nil {
					fail("NetworkPolicy %s: ipBlock %q: %v", np.Name, peer.IPBlock.CIDR, err)
					continue
				}
				var except []netip.Prefix
				for _, e := range peer.IPBlock.Except {
					p, err := netip.ParsePrefix(e)
					if err != nil {
						fail("NetworkPolicy %s: except %q: %v", np.Name, e, err)
						continue
					}
					except = append(except, p)
				}
				for _, s := range internalRanges {
					in := netip.MustParsePrefix(s)
					if !contains(cidr, in) {
						continue
					}
					if !slices.ContainsFunc(except, func(e netip.Prefix) bool { return contains(e, in) }) {
						fail("NetworkPolicy %s: ipBlock %s reaches the cluster-internal range %s: list it under except", np.Name, cidr, in)
					}
				}
				for _, p := range r.Ports {
					if p.Port == nil || !outsidePorts[int32(p.Port.IntValue())] || (p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP) {
						fail("NetworkPolicy %s: outside hosts on port %v: 80 and 443 over TCP only (an operator widens it in an overlay)", np.Name, p.Port)
					}
				}
			}
		}
	}
	for _, p := range pods {
		deny, dns, outside := false, false, false
		for _, np := range netpols {
			if !policySelects(np, p.labels) {
				continue
			}
			if hasType(np, networkingv1.PolicyTypeIngress) && hasType(np, networkingv1.PolicyTypeEgress) &&
				len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0 {
				deny = true
			}
			if p.kind == "Job" && hasType(np, networkingv1.PolicyTypeIngress) && len(np.Spec.Ingress) > 0 {
				fail("%s serves nothing, yet NetworkPolicy %s admits ingress to it", p, np.Name)
			}
			if !hasType(np, networkingv1.PolicyTypeEgress) {
				continue
			}
			for _, r := range np.Spec.Egress {
				if slices.ContainsFunc(r.To, isKubeDNS) && hasRulePort(r, corev1.ProtocolUDP, 53) && hasRulePort(r, corev1.ProtocolTCP, 53) {
					dns = true
				}
				for _, peer := range r.To {
					if peer.IPBlock == nil {
						continue
					}
					if !needsOutside(p) {
						fail("%s: NetworkPolicy %s lets it reach outside addresses (%s), which it does not call", p, np.Name, peer.IPBlock.CIDR)
					}
					if peer.IPBlock.CIDR == "0.0.0.0/0" && hasRulePort(r, corev1.ProtocolTCP, 443) {
						outside = true
					}
				}
			}
		}
		if !deny {
			fail("%s: no default deny selects it (a NetworkPolicy with policyTypes Ingress and Egress and no rules)", p)
		}
		if !dns {
			fail("%s: no egress to the cluster DNS (kube-dns in kube-system, UDP and TCP 53)", p)
		}
		if needsOutside(p) && !outside {
			fail("%s: no egress to outside hosts on TCP 443 (0.0.0.0/0 less the cluster-internal ranges): its MT service, hub or IIIF hosts are out of reach", p)
		}
	}
	return errs
}

// logsAndLayer is what a pod's ephemeral storage holds beside its
// emptyDirs: the containers' logs (the kubelet keeps up to 5 × 10 MiB
// each) and writable layers (the roots are read-only).
var logsAndLayer = resource.MustParse("256Mi")

// checkStorage: every container asks for and is limited in ephemeral
// storage, every emptyDir has a sizeLimit, and the pod's limits (their sum)
// hold its disk emptyDirs at their sizeLimits plus the logs: else the
// kubelet evicts the pod before a volume reaches its own limit.
func checkStorage(what string, p *corev1.PodSpec) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(what+": "+format, a...)) }
	total := resource.Quantity{}
	for _, c := range slices.Concat(p.InitContainers, p.Containers) {
		req, reqOK := c.Resources.Requests[corev1.ResourceEphemeralStorage]
		lim, limOK := c.Resources.Limits[corev1.ResourceEphemeralStorage]
		if !reqOK || !limOK || req.IsZero() || lim.IsZero() {
			fail("container %s: want an ephemeral-storage request and limit", c.Name)
			continue
		}
		if lim.Cmp(req) < 0 {
			fail("container %s: ephemeral-storage limit %s below its request %s", c.Name, &lim, &req)
		}
		total.Add(lim)
	}
	need := logsAndLayer.DeepCopy()
	for _, v := range p.Volumes {
		if v.EmptyDir == nil {
			continue
		}
		if v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.IsZero() {
			fail("emptyDir %s has no sizeLimit", v.Name)
			continue
		}
		if v.EmptyDir.Medium != corev1.StorageMediumMemory {
			need.Add(*v.EmptyDir.SizeLimit)
		}
	}
	if total.Cmp(need) < 0 {
		fail("ephemeral-storage limits (%s in all) below the emptyDirs' sizeLimits plus %s of logs (%s): the pod would be evicted before a volume reaches its own limit",
			&total, &logsAndLayer, &need)
	}
	return errs
}

// decoderVars are the variables that bound the classifier's processes and
// threads: GOMAXPROCS its decoder processes (imageio.NewIsolation starts at
// most runtime.GOMAXPROCS of them; docs/pageclass.md, "Decoder processes"),
// OMP_NUM_THREADS libtorch's intra-op threads (the node's cores otherwise).
var decoderVars = []string{"GOMAXPROCS", "OMP_NUM_THREADS"}

// checkClassifierCPU: the classifier's container has a CPU limit, its
// request within it, and both variables follow the limit: taken from it
// (resourceFieldRef limits.cpu, the limit rounded up) or equal to it.
func checkClassifierCPU(what string, c corev1.Container) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(what+": "+format, a...)) }
	lim, ok := c.Resources.Limits[corev1.ResourceCPU]
	if !ok || lim.IsZero() {
		return []error{fmt.Errorf("%s: container %s has no CPU limit: its decoder processes (one per CPU, GOMAXPROCS) and libtorch's threads would follow the node's CPUs", what, c.Name)}
	}
	if req, ok := c.Resources.Requests[corev1.ResourceCPU]; ok && req.Cmp(lim) > 0 {
		fail("container %s: CPU request %s above its limit %s", c.Name, &req, &lim)
	}
	cores := int64(math.Ceil(float64(lim.MilliValue()) / 1000))
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for _, name := range decoderVars {
		e, ok := env[name]
		fromLimit := ok && e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil &&
			e.ValueFrom.ResourceFieldRef.Resource == "limits.cpu" &&
			(e.ValueFrom.ResourceFieldRef.ContainerName == "" || e.ValueFrom.ResourceFieldRef.ContainerName == c.Name) &&
			(e.ValueFrom.ResourceFieldRef.Divisor.IsZero() || e.ValueFrom.ResourceFieldRef.Divisor.Cmp(resource.MustParse("1")) == 0)
		if !fromLimit && (!ok || e.Value != strconv.FormatInt(cores, 10)) {
			fail("container %s: %s must follow the CPU limit (resourceFieldRef limits.cpu, or %d): else it follows the node's CPUs", c.Name, name, cores)
		}
	}
	return errs
}

// checkTranslatorMemory: the translator's memory request is at least half
// its limit. It admits requests by estimated memory against 3/4 of the
// limit (MEMORY_BUDGET_MB), so a busy pod's working set nears that budget;
// a request of 256 MiB under a 1.5 GiB limit let the scheduler place it
// where that memory was not.
func checkTranslatorMemory(what string, c corev1.Container) []error {
	req, lim := c.Resources.Requests.Memory(), c.Resources.Limits.Memory()
	half := lim.DeepCopy()
	half.Set(lim.Value() / 2)
	if lim.IsZero() || req.Cmp(half) < 0 {
		return []error{fmt.Errorf("%s: container %s memory request %s below half its limit %s: requests are admitted up to 3/4 of the limit, so that is the working set under load", what, c.Name, req, lim)}
	}
	return nil
}

// minDeadline is the least activeDeadlineSeconds of a batch Job: a day.
const minDeadline = 24 * 60 * 60

// checkJobBounds: a batch Job ends (activeDeadlineSeconds, a day or more,
// so that a hung Job does not hold its nodes for ever but a large one
// finishes) and stops once more than maxFailedIndexes indexes failed, which
// is below its index count (at the count it never stops early).
func checkJobBounds(j *batchv1.Job) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf("Job "+j.Name+": "+format, a...)) }
	if d := j.Spec.ActiveDeadlineSeconds; d == nil || *d < minDeadline {
		fail("activeDeadlineSeconds: want one of a day (%d) or more", minDeadline)
	}
	m, n := j.Spec.MaxFailedIndexes, j.Spec.Completions
	if m == nil || n == nil || *m < 0 || *m >= *n {
		fail("maxFailedIndexes: want it set below the index count (completions)")
	}
	return errs
}

// recommended are the labels every object and pod template carries.
var recommended = []string{"app.kubernetes.io/name", "app.kubernetes.io/component", "app.kubernetes.io/part-of", "app.kubernetes.io/version"}

// checkLabels: every object, pod template and claim template carries the
// four recommended labels, part-of archivekit and version the release
// version; a template names the same name and component as its object.
func checkLabels(objs []runtime.Object, version string) []error {
	var errs []error
	check := func(what string, l map[string]string) {
		for _, k := range recommended {
			if l[k] == "" {
				errs = append(errs, fmt.Errorf("%s: label %s missing", what, k))
			}
		}
		if v, ok := l["app.kubernetes.io/part-of"]; ok && v != "archivekit" {
			errs = append(errs, fmt.Errorf("%s: label app.kubernetes.io/part-of %q, want archivekit", what, v))
		}
		if v, ok := l["app.kubernetes.io/version"]; ok && v != version {
			errs = append(errs, fmt.Errorf("%s: label app.kubernetes.io/version %q, want %q (VERSION)", what, v, version))
		}
	}
	same := func(what string, obj, tmpl map[string]string) {
		for _, k := range recommended[:2] {
			if obj[k] != tmpl[k] {
				errs = append(errs, fmt.Errorf("%s: pod template label %s %q, the object's %q", what, k, tmpl[k], obj[k]))
			}
		}
	}
	for _, obj := range objs {
		acc, err := meta.Accessor(obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		what := strings.TrimPrefix(fmt.Sprintf("%T", obj), "*v1.") + " " + acc.GetName()
		l := acc.GetLabels()
		check(what, l)
		switch x := obj.(type) {
		case *appsv1.Deployment:
			check(what+" pod template", x.Spec.Template.Labels)
			same(what, l, x.Spec.Template.Labels)
		case *appsv1.StatefulSet:
			check(what+" pod template", x.Spec.Template.Labels)
			same(what, l, x.Spec.Template.Labels)
			for _, c := range x.Spec.VolumeClaimTemplates {
				// every label but the version: claim templates cannot
				// change, and a new version's apply was refused
				if v, ok := c.Labels["app.kubernetes.io/version"]; ok {
					errs = append(errs, fmt.Errorf("%s claim template %s: label app.kubernetes.io/version %q (an upgrade could not apply it)", what, c.Name, v))
				}
				l := maps.Clone(c.Labels)
				if l == nil {
					l = map[string]string{}
				}
				l["app.kubernetes.io/version"] = version
				check(what+" claim template "+c.Name, l)
			}
		case *batchv1.Job:
			check(what+" pod template", x.Spec.Template.Labels)
			same(what, l, x.Spec.Template.Labels)
		}
	}
	return errs
}

// composeHealth is a compose service's health check.
type composeHealth struct {
	Test        []string `json:"test"`
	Interval    string   `json:"interval"`
	Timeout     string   `json:"timeout"`
	Retries     int      `json:"retries"`
	StartPeriod string   `json:"start_period"`
}

// composeDependency is a long-form depends_on entry.
type composeDependency struct {
	Condition string `json:"condition"`
}

// checkComposeHealth holds for every container of the compose files: it is
// started again after a crash and with the engine (unless-stopped), has a
// health check, and waits for each service it depends on to be healthy.
func checkComposeHealth(f composeFile, s composeService) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if s.Restart != "unless-stopped" {
		fail("restart %q, want unless-stopped", s.Restart)
	}
	if h := s.Healthcheck; h == nil || len(h.Test) < 2 || h.Test[0] != "CMD" || h.Interval == "" || h.Timeout == "" || h.Retries < 1 || h.StartPeriod == "" {
		fail("want a healthcheck (test [CMD, ...], interval, timeout, retries, start_period)")
	}
	for name, d := range s.DependsOn {
		if d.Condition != "service_healthy" {
			fail("depends_on %s: condition %q, want service_healthy", name, d.Condition)
		}
		if dep, ok := f.Services[name]; !ok || dep.Healthcheck == nil {
			fail("depends_on %s: no such service with a healthcheck", name)
		}
	}
	return errs
}

// checkComposeModels: a classifier's compose service mounts nothing at
// /app/model: an empty named volume there served the demo ensemble as if
// it were where the models go. The shipped demo serves as it is, and the
// published models come with the override files (TestComposeModels).
func checkComposeModels(s composeService) []error {
	for _, m := range s.Volumes {
		parts := strings.Split(m, ":")
		if len(parts) >= 2 && strings.TrimSuffix(parts[1], "/") == "/app/model" {
			return []error{fmt.Errorf("volume %q at /app/model: the base file serves the demo ensemble shipped in the image; the published models come with the models override file", m)}
		}
	}
	return nil
}

// TestComposeModels checks the override files that give the classifier the
// published models: one service for each classifier of its base file, each
// with -models /app/model (a missing model an error, never the demo) and
// the folder of PAGECLASS_MODELS, required, mounted read-only there.
func TestComposeModels(t *testing.T) {
	for override, base := range map[string]string{
		"compose/pageclass-models.override.yaml":  "compose/pageclass.compose.yaml",
		"compose/replicated-models.override.yaml": "compose/replicated.compose.yaml",
	} {
		t.Run(override, func(t *testing.T) {
			o, b := readCompose(t, override), readCompose(t, base)
			var want, got []string
			for name, s := range b.Services {
				if strings.Contains(s.Image, "/pageclass-api:") {
					want = append(want, name)
				}
			}
			for name, s := range o.Services {
				got = append(got, name)
				if strings.Join(s.Command, " ") != "-models /app/model" {
					t.Errorf("%s: command %q, want -models /app/model", name, s.Command)
				}
				if len(s.Volumes) != 1 || !strings.HasPrefix(s.Volumes[0], "${PAGECLASS_MODELS:?") || !strings.HasSuffix(s.Volumes[0], "}:/app/model:ro") {
					t.Errorf("%s: volumes %q, want ${PAGECLASS_MODELS:?...}:/app/model:ro", name, s.Volumes)
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if !slices.Equal(want, got) {
				t.Errorf("services %v, want the base file's classifiers %v", got, want)
			}
		})
	}
}

// TestComposeChecksFail shows that the compose checks catch each mistake:
// each case edits one file in one place.
func TestComposeChecksFail(t *testing.T) {
	v := version(t)
	for _, c := range []struct {
		file, service, jobs, old, new, want string
	}{
		{"compose/pageclass.compose.yaml", "pageclass-api", "sqlite", "restart: unless-stopped", "restart: on-failure", "unless-stopped"},
		{"compose/pageclass.compose.yaml", "pageclass-api", "sqlite", "    healthcheck:\n      test: [\"CMD\", \"/opt/archivekit/bin/healthcheck\"]\n", "    healthcheck:\n      test: []\n", "healthcheck"},
		{"compose/pageclass.compose.yaml", "pageclass-api", "sqlite", "      - pageclass-hub-cache:/cache\n", "      - pageclass-hub-cache:/cache\n      - pageclass-hub-cache:/app/model\n", "/app/model"},
		{"compose/replicated.compose.yaml", "pageclass-api", "postgres", "        condition: service_healthy", "        condition: service_started", "service_healthy"},
		{"compose/replicated.compose.yaml", "translate-api", "postgres", "      test: [\"CMD\", \"/usr/lib/postgresql/15/bin/pg_isready\"", "      test: [\"CMD\", \"/bin/true\"", "pg_isready"},
	} {
		t.Run(c.file+"/"+c.want, func(t *testing.T) {
			b, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), c.old) {
				t.Fatalf("%s has no %q to edit", c.file, c.old)
			}
			f, err := decodeCompose([]byte(strings.Replace(string(b), c.old, c.new, 1)))
			if err != nil {
				t.Fatal(err)
			}
			errs := composeErrors(f, c.service, c.jobs, v)
			if !strings.Contains(fmt.Sprint(errs), c.want) {
				t.Errorf("want an error naming %q, got %v", c.want, errs)
			}
		})
	}
}

// composeErrors are the rules every compose service is checked by.
func composeErrors(f composeFile, service, jobs, v string) []error {
	s, ok := f.Services[service]
	if !ok {
		return []error{fmt.Errorf("no service %s", service)}
	}
	errs := checkComposeService(s)
	errs = append(errs, checkComposeHealth(f, s)...)
	errs = append(errs, checkComposeModels(s)...)
	errs = append(errs, checkComposeJobs(f, s, jobs, v)...)
	return errs
}

// TestVersionNotOnClaimTemplates: no Kustomization that holds a
// StatefulSet puts the version label on its templates (includeTemplates):
// kubectl's Kustomize writes it into the claim templates too, which cannot
// change, so every release's apply was refused. (The Kustomize this test
// renders with leaves claim templates alone, so the rendering cannot show
// it: the files are read instead.)
func TestVersionNotOnClaimTemplates(t *testing.T) {
	files, err := filepath.Glob("*/*/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("*/kustomization.yaml")
	files = append(files, more...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var k struct {
			Labels []struct {
				Pairs            map[string]string `json:"pairs"`
				IncludeTemplates bool              `json:"includeTemplates"`
			} `json:"labels"`
			Resources []string `json:"resources"`
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		statefulSet := false
		for _, r := range k.Resources {
			if data, err := os.ReadFile(filepath.Join(filepath.Dir(f), r)); err == nil && strings.Contains(string(data), "kind: StatefulSet") {
				statefulSet = true
			}
		}
		for _, l := range k.Labels {
			if _, ok := l.Pairs["app.kubernetes.io/version"]; ok && l.IncludeTemplates && statefulSet {
				t.Errorf("%s: the version label with includeTemplates on a StatefulSet's templates (its claim templates cannot change)", f)
			}
		}
	}
}
