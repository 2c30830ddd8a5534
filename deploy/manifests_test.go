package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/intstr"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// strict decodes manifests the way an API server with strict field
// validation does: unknown and duplicate fields are errors, and so are
// values of the wrong type and kinds the scheme does not know.
var strict = func() runtime.Decoder {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, policyv1.AddToScheme, networkingv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Yaml: true, Strict: true})
}()

// render runs Kustomize on a kustomization folder, as `kubectl kustomize`
// does, and returns the multi-document YAML.
func render(t *testing.T, dir string) []byte {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	return out
}

// decodeAll strictly decodes every document of a multi-document YAML.
func decodeAll(data []byte) ([]runtime.Object, error) {
	r := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := strict.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		objs = append(objs, obj)
	}
}

// overlay is what one rendering must hold beyond the common rules.
type overlay struct {
	dir      string
	registry string            // where the images come from
	tag      map[string]string // image tag per service
	replicas int32
	gpu      bool // the classifier asks for a GPU on GPU nodes
	models   bool // the classifier is given -models /app/model (never the demo)
	// jobs is the job store: "postgres" (a server deployed beside replicas
	// that share it) or "sqlite" (a state folder on a volume per service).
	jobs string
	// version is the release version the objects' version label names.
	version string
}

// version is the release version of the images (VERSION, leading v stripped).
func version(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(strings.TrimSpace(string(b)), "v")
}

func overlays(t *testing.T) []overlay {
	v := version(t)
	return []overlay{
		{dir: "overlays/cpu", registry: "ghcr.io/archivekit", tag: map[string]string{"pageclass-api": v, "translate-api": v, "jobs-postgres": v}, replicas: 2, models: true, jobs: "postgres", version: v},
		{dir: "overlays/cuda", registry: "ghcr.io/archivekit", tag: map[string]string{"pageclass-api": v + "-cuda", "translate-api": v, "jobs-postgres": v}, replicas: 2, gpu: true, models: true, jobs: "postgres", version: v},
		{dir: "overlays/local", registry: "localhost/archivekit", tag: map[string]string{"pageclass-api": v, "translate-api": v}, replicas: 1, jobs: "sqlite", version: v},
	}
}

func TestOverlays(t *testing.T) {
	for _, o := range overlays(t) {
		t.Run(o.dir, func(t *testing.T) {
			objs, err := decodeAll(render(t, o.dir))
			if err != nil {
				t.Fatalf("%s: %v", o.dir, err)
			}
			for _, err := range check(objs, o) {
				t.Error(err)
			}
		})
	}
}

// TestChecksFail shows that the decoding and the checks catch each kind of
// mistake: each case edits the rendered CPU overlay in one place.
func TestChecksFail(t *testing.T) {
	base := string(render(t, "overlays/cpu"))
	o := overlays(t)[0]
	cases := []struct {
		name, old, new, want string
	}{
		{"unknown field", "  replicas: 2\n", "  replicas: 2\n  replicaz: 2\n", `unknown field "spec.replicaz"`},
		{"wrong type", "  replicas: 2\n", "  replicas: two\n", "replicas"},
		{"unknown kind", "kind: PodDisruptionBudget", "kind: PodDisruptionBudgett", "PodDisruptionBudgett"},
		{"selector mismatch", "    matchLabels:\n      app.kubernetes.io/name: pageclass-api\n  strategy:",
			"    matchLabels:\n      app.kubernetes.io/name: pageclass\n  strategy:", "does not match its pod labels"},
		{"service selects nothing", "    app.kubernetes.io/name: translate-api\n  type: ClusterIP", "    app.kubernetes.io/name: translate\n  type: ClusterIP", "selects no Deployment"},
		{"readiness on /health", "          path: /ready\n            port: http\n          periodSeconds: 5\n          timeoutSeconds: 3", "          path: /health\n            port: http\n          periodSeconds: 5\n          timeoutSeconds: 3", "readiness"},
		{"deep health probed", "path: /health\n", "path: /health?deep=true\n", "liveness"},
		{"grace too short", "terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 45", "grace"},
		{"token as a literal", "- name: HUB_TOKEN\n          valueFrom:\n            secretKeyRef:\n              key: token\n              name: archivekit-hub\n              optional: true",
			"- name: HUB_TOKEN\n          value: hf_abc", "HUB_TOKEN"},
		{"root user", "runAsUser: 10001", "runAsUser: 0", "10001"},
		{"writable root", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "read-only"},
		{"classifier under 4 GiB", "memory: 6Gi", "memory: 3Gi", "memory"},
		{"surge without unavailability", "maxUnavailable: 0", "maxUnavailable: 1", "maxUnavailable"},
		{"no upload cap", "        - name: MAX_UPLOAD_MB\n          value: \"50\"\n", "", "MAX_UPLOAD_MB"},
		{"no pre-stop sleep", `- "5"`, `- "1"`, "preStop"},
		{"image of another version", ":" + o.tag["translate-api"], ":9.9.9", "image"},
		// The review of 2026-11-30 (policy_test.go).
		{"no default deny", "  name: archivekit-default-deny\nspec:\n  podSelector:\n    matchLabels:\n      app.kubernetes.io/part-of: archivekit\n  policyTypes:\n  - Ingress\n  - Egress\n",
			"  name: archivekit-default-deny\nspec:\n  podSelector:\n    matchLabels:\n      app.kubernetes.io/part-of: archivekit\n  policyTypes:\n  - Ingress\n", "default deny"},
		{"no DNS", "k8s-app: kube-dns", "k8s-app: coredns", "cluster DNS"},
		{"egress to every destination", "  egress:\n  - ports:\n    - port: 443\n      protocol: TCP\n    - port: 80\n      protocol: TCP\n    to:\n",
			"  egress:\n  - ports:\n    - port: 443\n      protocol: TCP\n  - ports:\n    - port: 80\n      protocol: TCP\n    to:\n", "every destination"},
		{"internal range reachable", "        - 10.0.0.0/8\n", "", "10.0.0.0/8"},
		{"metadata address reachable", "        - 169.254.0.0/16\n", "", "169.254.0.0/16"},
		{"outside hosts on any port", "    - port: 443\n      protocol: TCP\n    - port: 80\n      protocol: TCP\n    to:\n    - ipBlock:",
			"    - port: 8443\n      protocol: TCP\n    - port: 80\n      protocol: TCP\n    to:\n    - ipBlock:", "443"},
		{"no ephemeral-storage limit", "            ephemeral-storage: 3Gi\n", "", "ephemeral-storage request and limit"},
		{"emptyDir without sizeLimit", "  - emptyDir:\n          sizeLimit: 2Gi\n", "  - emptyDir: {}\n", "sizeLimit"},
		{"emptyDir beyond the pod's limit", "sizeLimit: 2Gi", "sizeLimit: 8Gi", "evicted"},
		{"classifier without a CPU limit", "            cpu: \"4\"\n", "", "no CPU limit"},
		{"decoders not tied to the limit", "        - name: GOMAXPROCS\n          valueFrom:\n            resourceFieldRef:\n              divisor: \"1\"\n              resource: limits.cpu\n",
			"        - name: GOMAXPROCS\n          value: \"16\"\n", "GOMAXPROCS"},
		{"translator request far below its limit", "            ephemeral-storage: 1Gi\n            memory: 1Gi\n", "            ephemeral-storage: 1Gi\n            memory: 256Mi\n", "memory request"},
		{"label missing", "    app.kubernetes.io/component: api\n", "", "component"},
		{"version label of another version", "app.kubernetes.io/version: " + o.version, "app.kubernetes.io/version: 9.9.9", "VERSION"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.Count(base, c.old) == 0 {
				t.Fatalf("the rendering has no %q to edit", c.old)
			}
			edited := strings.Replace(base, c.old, c.new, 1)
			objs, err := decodeAll([]byte(edited))
			var errs []error
			if err != nil {
				errs = []error{err}
			} else {
				errs = check(objs, o)
			}
			if !strings.Contains(fmt.Sprint(errs), c.want) {
				t.Errorf("want an error naming %q, got %v", c.want, errs)
			}
		})
	}
}

// The shutdown chain of spec 3.3: pre-stop sleep, drain window, then up
// to 25 s more for in-flight work.
const (
	preStopS   = 5
	lifecycleS = 25
)

// secretish names environment variables that must come from a Secret.
var secretish = regexp.MustCompile(`(?i)(TOKEN|API_KEY|SECRET|PASSWORD)`)

// check applies the rules of the specifications to one rendering.
func check(objs []runtime.Object, o overlay) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	deps := map[string]*appsv1.Deployment{}
	sets := map[string]*appsv1.StatefulSet{}
	claims := map[string]bool{}
	var services []*corev1.Service
	var pdbs []*policyv1.PodDisruptionBudget
	var netpols []*networkingv1.NetworkPolicy
	type pod struct {
		name string
		spec *corev1.PodSpec
	}
	var pods []pod
	for _, obj := range objs {
		switch x := obj.(type) {
		case *appsv1.Deployment:
			deps[x.Name] = x
			pods = append(pods, pod{"Deployment " + x.Name, &x.Spec.Template.Spec})
			errs = append(errs, selects("Deployment "+x.Name, x.Spec.Selector, x.Spec.Template.Labels)...)
		case *appsv1.StatefulSet:
			sets[x.Name] = x
			// The claim templates are volumes of each pod.
			spec := x.Spec.Template.Spec.DeepCopy()
			for _, c := range x.Spec.VolumeClaimTemplates {
				claims[c.Name] = true
				spec.Volumes = append(spec.Volumes, corev1.Volume{Name: c.Name,
					VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}})
			}
			pods = append(pods, pod{"StatefulSet " + x.Name, spec})
			errs = append(errs, selects("StatefulSet "+x.Name, x.Spec.Selector, x.Spec.Template.Labels)...)
		case *batchv1.Job:
			pods = append(pods, pod{"Job " + x.Name, &x.Spec.Template.Spec})
			if x.Spec.Selector != nil {
				errs = append(errs, selects("Job "+x.Name, x.Spec.Selector, x.Spec.Template.Labels)...)
			}
		case *corev1.Service:
			services = append(services, x)
		case *policyv1.PodDisruptionBudget:
			pdbs = append(pdbs, x)
		case *networkingv1.NetworkPolicy:
			netpols = append(netpols, x)
		case *corev1.PersistentVolumeClaim:
			claims[x.Name] = true
		}
	}
	work := workloads(deps, sets)
	errs = append(errs, checkNetworkPolicies(work, netpols)...)
	errs = append(errs, checkNetwork(podsOf(objs), netpols)...)
	errs = append(errs, checkLabels(objs, o.version)...)
	for _, s := range services {
		n := 0
		for _, w := range work {
			if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.labels)) {
				n++
				for _, p := range s.Spec.Ports {
					if !hasPort(w.pod.Containers, p.TargetPort) {
						fail("Service %s: target port %s is no port of %s", s.Name, p.TargetPort.String(), w.name)
					}
				}
			}
		}
		if n != 1 {
			fail("Service %s selects no Deployment or several (%d)", s.Name, n)
		}
	}
	for _, p := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		n := 0
		for _, d := range deps {
			if err == nil && sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				n++
			}
		}
		if n != 1 {
			fail("PodDisruptionBudget %s selects no Deployment or several (%d)", p.Name, n)
		}
	}
	for _, p := range pods {
		errs = append(errs, checkPod(p.name, p.spec, claims)...)
	}
	for _, name := range []string{"pageclass-api", "translate-api"} {
		d, ok := deps[name]
		if !ok {
			fail("no Deployment %s", name)
			continue
		}
		errs = append(errs, checkService(d, o)...)
	}
	errs = append(errs, checkJobStore(deps, sets, services, netpols, o)...)
	return errs
}

// workload is a Deployment or a StatefulSet, as Services and
// NetworkPolicies see it.
type workload struct {
	name   string // "Deployment pageclass-api"
	labels map[string]string
	pod    *corev1.PodSpec
}

func workloads(deps map[string]*appsv1.Deployment, sets map[string]*appsv1.StatefulSet) []workload {
	var ws []workload
	for _, d := range deps {
		ws = append(ws, workload{"Deployment " + d.Name, d.Spec.Template.Labels, &d.Spec.Template.Spec})
	}
	for _, s := range sets {
		ws = append(ws, workload{"StatefulSet " + s.Name, s.Spec.Template.Labels, &s.Spec.Template.Spec})
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].name < ws[j].name })
	return ws
}

// selects checks that a workload's selector picks its own pod template.
func selects(what string, ls *metav1.LabelSelector, podLabels map[string]string) []error {
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return []error{fmt.Errorf("%s: selector: %w", what, err)}
	}
	if sel.Empty() || !sel.Matches(labels.Set(podLabels)) {
		return []error{fmt.Errorf("%s: selector %s does not match its pod labels %v", what, sel, podLabels)}
	}
	return nil
}

func hasPort(cs []corev1.Container, port intstr.IntOrString) bool {
	for _, c := range cs {
		for _, p := range c.Ports {
			if (port.Type == intstr.String && p.Name == port.StrVal) || (port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
				return true
			}
		}
	}
	return false
}

// checkPod holds for every pod of the project: the image's user, a
// read-only root with a writable /tmp, secrets only from Secrets, claims
// that exist.
func checkPod(what string, p *corev1.PodSpec, claims map[string]bool) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(what+": "+format, a...)) }
	vols := map[string]corev1.Volume{}
	for _, v := range p.Volumes {
		vols[v.Name] = v
		if v.PersistentVolumeClaim != nil && !claims[v.PersistentVolumeClaim.ClaimName] {
			fail("volume %s names claim %s, which the rendering does not hold", v.Name, v.PersistentVolumeClaim.ClaimName)
		}
	}
	for _, c := range p.Containers {
		uid, nonRoot := p.SecurityContext.RunAsUser, p.SecurityContext.RunAsNonRoot
		sc := c.SecurityContext
		if sc != nil && sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc != nil && sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		if uid == nil || *uid != 10001 || nonRoot == nil || !*nonRoot {
			fail("container %s must run as the image's user uid 10001 with runAsNonRoot", c.Name)
		}
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			fail("container %s: root file system not read-only", c.Name)
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			fail("container %s: privilege escalation not turned off", c.Name)
		}
		tmp := false
		for _, m := range c.VolumeMounts {
			if _, ok := vols[m.Name]; !ok {
				fail("container %s mounts %s, which is no volume", c.Name, m.Name)
			}
			if m.MountPath == "/tmp" && vols[m.Name].EmptyDir != nil {
				tmp = true
			}
		}
		if !tmp {
			fail("container %s: no emptyDir at /tmp under a read-only root", c.Name)
		}
		for _, e := range c.Env {
			if !secretish.MatchString(e.Name) {
				continue
			}
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				fail("container %s: %s must come from a Secret (secretKeyRef), never a literal or a ConfigMap", c.Name, e.Name)
			}
		}
		if len(c.EnvFrom) > 0 {
			fail("container %s: envFrom hides which variables are set; name each one", c.Name)
		}
	}
	return append(errs, checkStorage(what, p)...)
}

// checkService holds for the two HTTP services (spec 3.2, 3.3, 5, 8).
func checkService(d *appsv1.Deployment, o overlay) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf("Deployment "+d.Name+": "+format, a...)) }
	spec := d.Spec.Template.Spec
	var c *corev1.Container
	for i := range spec.Containers {
		if spec.Containers[i].Name == d.Name {
			c = &spec.Containers[i]
		}
	}
	if c == nil {
		return []error{fmt.Errorf("Deployment %s: no container %s", d.Name, d.Name)}
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != o.replicas {
		fail("replicas: want %d", o.replicas)
	}
	if want := o.registry + "/" + d.Name + ":" + o.tag[d.Name]; c.Image != want {
		fail("image %q, want %q", c.Image, want)
	}

	if strings.HasPrefix(o.registry, "localhost/") && c.ImagePullPolicy != corev1.PullNever {
		fail("imagePullPolicy %q: images imported into the node are never pulled", c.ImagePullPolicy)
	}

	// Rolling update without unavailability; with a SQLite state folder,
	// which one process holds at a time, the old pod stops first.
	// A pod holding a GPU is replaced one at a time instead, the other
	// replica serving: a surge pod needs a spare GPU, and without one the
	// rollout stalled.
	ru := d.Spec.Strategy.RollingUpdate
	_, gpu := c.Resources.Limits["nvidia.com/gpu"]
	switch {
	case o.jobs == "sqlite":
		if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			fail("strategy %s: want Recreate, one process per SQLite state folder (JOBS_DIR)", d.Spec.Strategy.Type)
		}
	case gpu:
		if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxSurge == nil || ru.MaxSurge.String() != "0" ||
			ru.MaxUnavailable == nil || ru.MaxUnavailable.String() != "1" || d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
			fail("strategy: a GPU pod wants RollingUpdate with maxSurge 0 and maxUnavailable 1, with 2 replicas or more")
		}
	case d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable == nil ||
		ru.MaxUnavailable.String() != "0" || ru.MaxSurge == nil || ru.MaxSurge.String() == "0":
		fail("strategy: want RollingUpdate with maxUnavailable 0 and a surge")
	}

	// Probes, spec 3.2.
	probes := []struct {
		name                      string
		p                         *corev1.Probe
		path                      string
		period, failures, timeout int32 // timeout 0: not specified
	}{
		{"startup", c.StartupProbe, "/ready", 5, 60, 0},
		{"readiness", c.ReadinessProbe, "/ready", 5, 2, 3},
		{"liveness", c.LivenessProbe, "/health", 15, 3, 5},
	}
	for _, w := range probes {
		p := w.p
		switch {
		case p == nil || p.HTTPGet == nil:
			fail("%s probe: want an HTTP GET of %s", w.name, w.path)
		case p.HTTPGet.Path != w.path || !hasPort([]corev1.Container{*c}, p.HTTPGet.Port):
			fail("%s probe: path %s on port %s, want %s on the service port", w.name, p.HTTPGet.Path, p.HTTPGet.Port.String(), w.path)
		case p.PeriodSeconds != w.period || p.FailureThreshold != w.failures || (w.timeout != 0 && p.TimeoutSeconds != w.timeout):
			fail("%s probe: every %d s, %d failures, timeout %d s; want %d, %d, %d", w.name,
				p.PeriodSeconds, p.FailureThreshold, p.TimeoutSeconds, w.period, w.failures, w.timeout)
		}
	}

	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	// Shutdown chain, spec 3.3.
	drain := 20
	if e, ok := env["GRACEFUL_SHUTDOWN_S"]; ok {
		n, err := strconv.Atoi(e.Value)
		if err != nil {
			fail("GRACEFUL_SHUTDOWN_S=%q is not a number of seconds", e.Value)
		}
		drain = n
	}
	need := int64(preStopS + drain + lifecycleS)
	if g := spec.TerminationGracePeriodSeconds; g == nil || *g < need {
		fail("termination grace below %d s (pre-stop %d + GRACEFUL_SHUTDOWN_S %d + %d)", need, preStopS, drain, lifecycleS)
	}
	if l := c.Lifecycle; l == nil || l.PreStop == nil || l.PreStop.Exec == nil ||
		strings.Join(l.PreStop.Exec.Command, " ") != fmt.Sprintf("/bin/sleep %d", preStopS) {
		fail("preStop: want a sleep of %d s", preStopS)
	}

	// Environment, spec 5 and 8.
	for _, k := range []string{"PORT", "LOG_LEVEL", "GRACEFUL_SHUTDOWN_S"} {
		if e, ok := env[k]; ok && e.Value == "" && e.ValueFrom == nil {
			fail("%s set but empty: the service refuses to start", k)
		}
	}
	if e, ok := env["MAX_UPLOAD_MB"]; !ok || e.Value == "" {
		fail("MAX_UPLOAD_MB must be set explicitly")
	}
	origins, narrowed := env["ALLOWED_ORIGINS"]
	switch d.Name {
	case "pageclass-api":
		if want := "http://localhost:8080,http://127.0.0.1:8080"; !narrowed || origins.Value != want {
			fail("ALLOWED_ORIGINS %q, want %q (spec 5)", origins.Value, want)
		}
	case "translate-api":
		if narrowed {
			fail("ALLOWED_ORIGINS set; the translator's example does not narrow it (spec 5)")
		}
		if _, ok := env["LLM_API_KEY"]; !ok {
			fail("LLM_API_KEY is not wired from its Secret")
		}
		for _, err := range checkMT(env) {
			fail("%v", err)
		}
	}
	if _, ok := env["HUB_TOKEN"]; !ok {
		fail("HUB_TOKEN is not wired from its Secret")
	}

	// Storage, spec 8: /app/model (classifier) and HUB_HOME on volumes.
	mounts := []string{}
	hub := env["HUB_HOME"].Value
	if hub == "" {
		fail("HUB_HOME not set")
	} else {
		mounts = append(mounts, hub)
	}
	if d.Name == "pageclass-api" {
		mounts = append(mounts, "/app/model")
	}
	for _, path := range mounts {
		found := false
		for _, m := range c.VolumeMounts {
			if path == m.MountPath || strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
				found = true
			}
		}
		if !found {
			fail("%s is on no volume: each new pod would download again", path)
		}
	}

	// Memory, spec 8.
	req, lim := c.Resources.Requests.Memory(), c.Resources.Limits.Memory()
	if req.IsZero() || lim.IsZero() || lim.Cmp(*req) < 0 {
		fail("memory request %s and limit %s: want both, limit at least the request", req, lim)
	}
	if d.Name == "pageclass-api" {
		floor := resource.MustParse("4Gi")
		if req.Cmp(floor) < 0 || lim.Cmp(floor) < 0 {
			fail("memory request %s, limit %s: 4 GiB is the floor for the five models", req, lim)
		}
		gpu := c.Resources.Limits[corev1.ResourceName("nvidia.com/gpu")]
		if o.gpu != !gpu.IsZero() || o.gpu != (len(spec.NodeSelector) > 0) {
			fail("GPU: want a nvidia.com/gpu limit and a node selector only on the cuda overlay")
		}
		hasModels := strings.Join(c.Args, " ") == "-models /app/model" || strings.HasPrefix(strings.Join(c.Args, " "), "-models /app/model ")
		if hasModels != o.models {
			fail("args %q: -models /app/model wanted %v", c.Args, o.models)
		}
	}
	// CPU and memory, the review of 2026-11-30.
	switch d.Name {
	case "pageclass-api":
		errs = append(errs, checkClassifierCPU("Deployment "+d.Name, *c)...)
	case "translate-api":
		errs = append(errs, checkTranslatorMemory("Deployment "+d.Name, *c)...)
	}
	return errs
}

// TestCompose checks the one-machine compose files: the classifier narrows
// cross-origin access to the two local addresses on port 8080, the
// translator does not, uploads are capped explicitly and no secret has a
// value in the file.
func TestCompose(t *testing.T) {
	v := version(t)
	files := map[string]composeFile{}
	for _, c := range []struct {
		file, service, origins string
		narrowed               bool
		upload                 string
		jobs                   string // sqlite or postgres
	}{
		{"compose/pageclass.compose.yaml", "pageclass-api", "http://localhost:8080,http://127.0.0.1:8080", true, "10", "sqlite"},
		{"compose/translate.compose.yaml", "translate-api", "", false, "50", "sqlite"},
		{"compose/replicated.compose.yaml", "pageclass-api", "http://localhost:8080,http://127.0.0.1:8080", true, "10", "postgres"},
		{"compose/replicated.compose.yaml", "pageclass-api-2", "http://localhost:8080,http://127.0.0.1:8080", true, "10", "postgres"},
		{"compose/replicated.compose.yaml", "translate-api", "", false, "50", "postgres"},
		{"compose/replicated.compose.yaml", "translate-api-2", "", false, "50", "postgres"},
	} {
		t.Run(c.file+"/"+c.service, func(t *testing.T) {
			f, ok := files[c.file]
			if !ok {
				f = readCompose(t, c.file)
				files[c.file] = f
			}
			for _, err := range checkComposeHealth(f, f.Services[c.service]) {
				t.Error(err)
			}
			for _, err := range checkComposeModels(f.Services[c.service]) {
				t.Error(err)
			}
			s, ok := f.Services[c.service]
			if !ok {
				t.Fatalf("%s: no service %s", c.file, c.service)
			}
			image := strings.TrimSuffix(c.service, "-2")
			if want := "ghcr.io/archivekit/" + image + ":" + v; s.Image != want {
				t.Errorf("image %q, want %q", s.Image, want)
			}
			for _, err := range checkComposeService(s) {
				t.Error(err)
			}
			o, set := s.Environment["ALLOWED_ORIGINS"]
			if set != c.narrowed || (set && (o == nil || *o != c.origins)) {
				t.Errorf("ALLOWED_ORIGINS: set %v, want set %v with %q", set, c.narrowed, c.origins)
			}
			if u := s.Environment["MAX_UPLOAD_MB"]; u == nil || *u != c.upload {
				t.Errorf("MAX_UPLOAD_MB not %s", c.upload)
			}
			if strings.HasPrefix(c.service, "translate") {
				// The MT service from the shell, the public one refused.
				if u, ok := s.Environment["TRANSLATION_URL"]; !ok || u != nil {
					t.Errorf("TRANSLATION_URL: want it passed from the shell (no value in the file)")
				}
				if p := s.Environment["TRANSLATE_PUBLIC_SERVICES"]; p == nil || *p != "refuse" {
					t.Errorf("TRANSLATE_PUBLIC_SERVICES: want refuse")
				}
				if l := s.Environment["LEMMATIZER_URL"]; l == nil || *l == "" {
					t.Errorf("LEMMATIZER_URL: want off or an address (translate refuses to start without, the public one refused)")
				}
			}
			for _, err := range checkComposeJobs(f, s, c.jobs, v) {
				t.Error(err)
			}
		})
	}
}

type composeService struct {
	Image           string                       `json:"image"`
	User            string                       `json:"user"`
	ReadOnly        bool                         `json:"read_only"`
	StopGracePeriod string                       `json:"stop_grace_period"`
	Environment     map[string]*string           `json:"environment"`
	Tmpfs           []string                     `json:"tmpfs"`
	Volumes         []string                     `json:"volumes"`
	Ports           []string                     `json:"ports"`
	CapDrop         []string                     `json:"cap_drop"`
	SecurityOpt     []string                     `json:"security_opt"`
	StopSignal      string                       `json:"stop_signal"`
	MemLimit        string                       `json:"mem_limit"`
	MemReservation  string                       `json:"mem_reservation"`
	Restart         string                       `json:"restart"`
	DependsOn       map[string]composeDependency `json:"depends_on"`
	Healthcheck     *composeHealth               `json:"healthcheck"`
	Command         []string                     `json:"command"`
}

type composeFile struct {
	Name     string                    `json:"name"`
	Services map[string]composeService `json:"services"`
	Volumes  map[string]struct{}       `json:"volumes"`
}

// readCompose decodes a compose file strictly into the fields the checks
// use.
func readCompose(t *testing.T, path string) composeFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := decodeCompose(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// decodeCompose decodes a compose file strictly.
func decodeCompose(b []byte) (composeFile, error) {
	var f composeFile
	err := yaml.UnmarshalStrict(b, &f)
	return f, err
}

// checkComposeService holds for every container of the compose files: the
// image's user, a read-only root with a tmpfs /tmp, the grace of spec 3.3,
// no secret written in the file.
func checkComposeService(s composeService) []error {
	var errs []error
	if s.User != "10001:10001" || !s.ReadOnly || len(s.Tmpfs) == 0 || s.Tmpfs[0] != "/tmp" {
		errs = append(errs, fmt.Errorf("want user 10001, a read-only root and a tmpfs /tmp; got %q %v %v", s.User, s.ReadOnly, s.Tmpfs))
	}
	if s.StopGracePeriod != "60s" {
		errs = append(errs, fmt.Errorf("stop_grace_period %q, want 60s (spec 3.3)", s.StopGracePeriod))
	}
	for k, val := range s.Environment {
		if secretish.MatchString(k) && val != nil {
			errs = append(errs, fmt.Errorf("%s has a value in the file; it must be passed from the environment only", k))
		}
	}
	return errs
}

// checkComposeJobs: a one-replica file keeps its jobs in SQLite on a named
// volume (JOBS_DIR); the replicated file points every replica at its
// PostgreSQL service (the jobs-postgres image, its data on a volume, its
// password from the shell only, interpolated into the URL).
func checkComposeJobs(f composeFile, s composeService, store, v string) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	onVolume := func(path string, vols []string) bool {
		for _, m := range vols {
			name, mount, ok := strings.Cut(m, ":")
			mount, _, _ = strings.Cut(mount, ":")
			if _, named := f.Volumes[name]; ok && named && (path == mount || strings.HasPrefix(path, strings.TrimSuffix(mount, "/")+"/")) {
				return true
			}
		}
		return false
	}
	dir, url := s.Environment["JOBS_DIR"], s.Environment["JOBS_DATABASE_URL"]
	switch store {
	case "sqlite":
		if dir == nil || !onVolume(*dir, s.Volumes) {
			fail("JOBS_DIR must name a folder on a named volume")
		}
		if url != nil {
			fail("JOBS_DATABASE_URL set in a one-replica file")
		}
	case "postgres":
		if dir != nil {
			fail("JOBS_DIR set beside PostgreSQL")
		}
		if url == nil || !strings.HasPrefix(*url, "postgres://archivekit:${POSTGRES_PASSWORD") || !strings.Contains(*url, "@postgres:5432/archivekit") {
			fail("JOBS_DATABASE_URL %v: want the postgres service's URL with the password from the shell", url)
		}
		if d, ok := s.DependsOn["postgres"]; !ok || d.Condition != "service_healthy" {
			fail("want depends_on postgres with condition service_healthy (the replicas start once the database answers)")
		}
		pg, ok := f.Services["postgres"]
		if !ok {
			fail("no postgres service")
			break
		}
		if want := "ghcr.io/archivekit/jobs-postgres:" + v; pg.Image != want {
			fail("postgres image %q, want %q", pg.Image, want)
		}
		if pw, ok := pg.Environment["POSTGRES_PASSWORD"]; !ok || pw != nil {
			fail("postgres: POSTGRES_PASSWORD must be passed from the shell")
		}
		if d := pg.Environment["PGDATA"]; d == nil || !onVolume(*d, pg.Volumes) || strings.HasSuffix(*d, "/data") {
			fail("postgres: PGDATA must be a folder below a named volume's root")
		}
		if h := pg.Healthcheck; h == nil || len(h.Test) < 2 || !strings.HasSuffix(h.Test[1], "/"+pgReadiness) {
			fail("postgres: want a healthcheck by %s (the replicas wait for it)", pgReadiness)
		}
		errs = append(errs, checkComposeService(pg)...)
		errs = append(errs, checkComposeHealth(f, pg)...)
	}
	return errs
}

// TestBatchJob checks the Indexed Jobs of sharded batch runs, and that
// mistakes in them are caught.
func TestBatchJob(t *testing.T) {
	data := string(render(t, "batch"))
	v := version(t)
	images := map[string]string{
		"pageclass-shards": "ghcr.io/archivekit/pageclass:" + v,
		"translate-shards": "ghcr.io/archivekit/translate:" + v,
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"as shipped", "", "", ""},
		{"shards disagree with completions", "completions: 4", "completions: 3", "--shard"},
		{"not indexed", "completionMode: Indexed", "completionMode: NonIndexed", "Indexed"},
		{"key as a literal", "- name: LLM_API_KEY\n          valueFrom:\n            secretKeyRef:\n              key: api-key\n              name: archivekit-llm\n              optional: true",
			"- name: LLM_API_KEY\n          value: sk-1", "LLM_API_KEY"},
		{"classifier without its models", "- -m\n        - /app/model\n", "", "-m /app/model"},
		{"classifier under 4 GiB", "memory: 6Gi", "memory: 2Gi", "4 GiB"},
		{"public MT service allowed", "- name: TRANSLATE_PUBLIC_SERVICES\n          value: refuse", "- name: TRANSLATE_PUBLIC_SERVICES\n          value: allow", "TRANSLATE_PUBLIC_SERVICES"},
		{"no lemmatiser while the public one is refused", "- name: LEMMATIZER_URL\n          value: \"off\"", "- name: NO_LEMMATIZER\n          value: \"off\"", "LEMMATIZER_URL"},
		// The review of 2026-11-30 (policy_test.go).
		{"no deadline", "  activeDeadlineSeconds: 259200\n", "", "activeDeadlineSeconds"},
		{"a deadline of an hour", "activeDeadlineSeconds: 259200", "activeDeadlineSeconds: 3600", "activeDeadlineSeconds"},
		{"maxFailedIndexes at the index count", "maxFailedIndexes: 1", "maxFailedIndexes: 4", "maxFailedIndexes"},
		{"cache without sizeLimit", "  - emptyDir:\n          sizeLimit: 6Gi\n", "  - emptyDir: {}\n", "sizeLimit"},
		{"no ephemeral-storage request", "            ephemeral-storage: 256Mi\n", "", "ephemeral-storage request and limit"},
		{"Jobs without default deny", "  name: archivekit-batch-default-deny\nspec:\n  podSelector:\n    matchLabels:\n      app.kubernetes.io/component: batch",
			"  name: archivekit-batch-default-deny\nspec:\n  podSelector:\n    matchLabels:\n      app.kubernetes.io/component: service", "default deny"},
		{"Jobs without outside hosts", "        cidr: 0.0.0.0/0", "        cidr: 203.0.113.0/24", "outside hosts"},
		{"classifier Job without a CPU limit", "            cpu: \"2\"\n            ephemeral-storage: 10Gi\n", "            ephemeral-storage: 10Gi\n", "no CPU limit"},
		{"translator Job request far below its limit", "            ephemeral-storage: 256Mi\n            memory: 1Gi\n", "            ephemeral-storage: 256Mi\n            memory: 128Mi\n", "memory request"},
		{"label missing", "    app.kubernetes.io/component: batch\n", "", "component"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(data, c.old) {
				t.Fatalf("the rendering has no %q to edit", c.old)
			}
			objs, err := decodeAll([]byte(strings.Replace(data, c.old, c.new, 1)))
			if err != nil {
				t.Fatal(err)
			}
			errs := checkJobs(objs, images, v)
			if c.want == "" && len(errs) > 0 {
				t.Errorf("%v", errs)
			}
			if c.want != "" && !strings.Contains(fmt.Sprint(errs), c.want) {
				t.Errorf("want an error naming %q, got %v", c.want, errs)
			}
		})
	}
}

// checkMT holds for every translator container: its MT service's address
// comes from the Secret archivekit-mt, and the public service is refused,
// so that documents go to no service the site did not name (the shipped
// files sent them to LINDAT's public service when no address was given).
func checkMT(env map[string]corev1.EnvVar) []error {
	var errs []error
	if e := env["TRANSLATION_URL"]; e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "archivekit-mt" {
		errs = append(errs, errors.New("TRANSLATION_URL is not wired from the Secret archivekit-mt"))
	}
	if e := env["TRANSLATE_PUBLIC_SERVICES"]; e.Value != "refuse" {
		errs = append(errs, fmt.Errorf("TRANSLATE_PUBLIC_SERVICES %q, want refuse: documents would go to the public MT service", e.Value))
	}
	// With the public services refused, an unset lemmatiser stops
	// translate at start (every batch index failed): off, or an address.
	if e := env["LEMMATIZER_URL"]; e.Value == "" && e.ValueFrom == nil {
		errs = append(errs, errors.New("LEMMATIZER_URL unset: with TRANSLATE_PUBLIC_SERVICES=refuse translate refuses to start; give off or your lemmatiser's address"))
	}
	return errs
}

// checkJobs holds for the batch Jobs: one per image given, indexed, one
// shard per index, each index retried alone, the classifier on the
// published models with its memory floor, and the pod rules of every pod.
func checkJobs(objs []runtime.Object, images map[string]string, version string) []error {
	var errs []error
	claims := map[string]bool{}
	jobs := map[string]*batchv1.Job{}
	var netpols []*networkingv1.NetworkPolicy
	for _, obj := range objs {
		switch x := obj.(type) {
		case *batchv1.Job:
			jobs[x.Name] = x
		case *corev1.PersistentVolumeClaim:
			claims[x.Name] = true
		case *networkingv1.NetworkPolicy:
			netpols = append(netpols, x)
		}
	}
	errs = append(errs, checkNetwork(podsOf(objs), netpols)...)
	errs = append(errs, checkLabels(objs, version)...)
	if len(jobs) != len(images) {
		errs = append(errs, fmt.Errorf("%d Jobs, want %d", len(jobs), len(images)))
	}
	for name, image := range images {
		j, ok := jobs[name]
		if !ok {
			errs = append(errs, fmt.Errorf("no Job %s", name))
			continue
		}
		fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf("Job "+j.Name+": "+format, a...)) }
		s := j.Spec
		if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || s.Completions == nil {
			fail("want completionMode Indexed with completions")
			continue
		}
		if s.BackoffLimitPerIndex == nil || j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			fail("want backoffLimitPerIndex (each index retried alone) and restartPolicy Never")
		}
		c := j.Spec.Template.Spec.Containers[0]
		if c.Image != image {
			fail("image %q, want %q", c.Image, image)
		}
		args := strings.Join(c.Args, " ")
		if want := fmt.Sprintf("--shard $(JOB_COMPLETION_INDEX)/%d", *s.Completions); !strings.Contains(args, want) {
			fail("args %q: want %q, one shard per index", c.Args, want)
		}
		if strings.HasPrefix(name, "pageclass") {
			if !strings.Contains(args, "-m /app/model") {
				fail("args %q: want -m /app/model (the published models, never the demo)", c.Args)
			}
			floor := resource.MustParse("4Gi")
			if c.Resources.Requests.Memory().Cmp(floor) < 0 || c.Resources.Limits.Memory().Cmp(floor) < 0 {
				fail("memory request and limit: 4 GiB is the floor for the five models")
			}
			errs = append(errs, checkClassifierCPU("Job "+j.Name, c)...)
		} else {
			errs = append(errs, checkTranslatorMemory("Job "+j.Name, c)...)
			env := map[string]corev1.EnvVar{}
			for _, e := range c.Env {
				env[e.Name] = e
			}
			for _, err := range checkMT(env) {
				fail("%v", err)
			}
		}
		errs = append(errs, checkPod("Job "+j.Name, &j.Spec.Template.Spec, claims)...)
		errs = append(errs, checkJobBounds(j)...)
	}
	return errs
}

// checkNetworkPolicies: every service Deployment is selected by a
// NetworkPolicy that restricts ingress (issue 32), and the ports it opens
// are ports of that Deployment. Job pods (deploy/batch) serve nothing and
// are not checked.
func checkNetworkPolicies(work []workload, netpols []*networkingv1.NetworkPolicy) []error {
	var errs []error
	for _, d := range work {
		covered := false
		for _, np := range netpols {
			sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
			if err != nil || np.Spec.PodSelector.Size() == 0 || !sel.Matches(labels.Set(d.labels)) {
				continue
			}
			if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
				continue
			}
			covered = true
			for _, rule := range np.Spec.Ingress {
				if len(rule.From) == 0 {
					errs = append(errs, fmt.Errorf("NetworkPolicy %s: an ingress rule without \"from\" admits every client", np.Name))
				}
				for _, p := range rule.Ports {
					if p.Port == nil || !hasPort(d.pod.Containers, *p.Port) {
						errs = append(errs, fmt.Errorf("NetworkPolicy %s: port %v is no port of %s", np.Name, p.Port, d.name))
					}
				}
			}
		}
		if !covered {
			errs = append(errs, fmt.Errorf("%s: no NetworkPolicy restricts who may reach it", d.name))
		}
	}
	return errs
}
