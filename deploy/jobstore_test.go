package deploy

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The job store's names (components/jobs-postgres, components/jobs-sqlite).
const (
	pgName      = "archivekit-postgres"
	pgPort      = 5432
	jobsSecret  = "archivekit-jobs"
	pgReadiness = "pg_isready"
)

// serviceNames are the two HTTP services, which use the job store.
var serviceNames = []string{"pageclass-api", "translate-api"}

// checkJobStore holds for the job store of issue 30. PostgreSQL (the
// replicated overlays): one server, a StatefulSet of the project's
// jobs-postgres image with its data on a claim, its password from the
// Secret archivekit-jobs, readiness and startup probes, a Service on 5432,
// a NetworkPolicy admitting the two services only; each service requires
// JOBS_DATABASE_URL from the same Secret and has no JOBS_DIR. SQLite (the
// single-replica overlay): no server; each service has JOBS_DIR on a
// claim of its own, no JOBS_DATABASE_URL, one replica and the Recreate
// strategy (checkService).
func checkJobStore(deps map[string]*appsv1.Deployment, sets map[string]*appsv1.StatefulSet, services []*corev1.Service, netpols []*networkingv1.NetworkPolicy, o overlay) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch o.jobs {
	case "postgres":
		if len(sets) != 1 || sets[pgName] == nil {
			fail("job store: want one StatefulSet %s, got %d", pgName, len(sets))
		} else {
			errs = append(errs, checkPostgres(sets[pgName], services, netpols, deps, o)...)
		}
		for _, name := range serviceNames {
			d := deps[name]
			if d == nil {
				continue
			}
			env := containerEnv(d.Spec.Template.Spec.Containers, name)
			u, ok := env["JOBS_DATABASE_URL"]
			if !ok || u.ValueFrom == nil || u.ValueFrom.SecretKeyRef == nil || u.ValueFrom.SecretKeyRef.Name != jobsSecret ||
				u.ValueFrom.SecretKeyRef.Key != "database-url" {
				fail("Deployment %s: JOBS_DATABASE_URL must come from Secret %s, key database-url", name, jobsSecret)
			} else if opt := u.ValueFrom.SecretKeyRef.Optional; opt != nil && *opt {
				fail("Deployment %s: JOBS_DATABASE_URL is optional: replicas would start without a job API beside their database", name)
			}
			if _, ok := env["JOBS_DIR"]; ok {
				fail("Deployment %s: JOBS_DIR set beside PostgreSQL", name)
			}
		}
	case "sqlite":
		if len(sets) > 0 {
			fail("job store: SQLite wants no database server, got %d StatefulSets", len(sets))
		}
		used := map[string]string{}
		for _, name := range serviceNames {
			d := deps[name]
			if d == nil {
				continue
			}
			spec := d.Spec.Template.Spec
			env := containerEnv(spec.Containers, name)
			if _, ok := env["JOBS_DATABASE_URL"]; ok {
				fail("Deployment %s: JOBS_DATABASE_URL would take precedence over the SQLite folder", name)
			}
			dir := env["JOBS_DIR"].Value
			claim := claimAt(spec, name, dir)
			switch {
			case dir == "":
				fail("Deployment %s: no JOBS_DIR: no job API", name)
			case claim == "":
				fail("Deployment %s: JOBS_DIR %s is on no claim: the jobs would die with the pod", name, dir)
			case used[claim] != "":
				fail("Deployment %s: JOBS_DIR on claim %s, which %s uses too", name, claim, used[claim])
			}
			used[claim] = name
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
				fail("Deployment %s: a SQLite state folder serves one replica", name)
			}
		}
	default:
		fail("overlay %s: no job store named", o.dir)
	}
	return errs
}

// checkPostgres checks the database server and what reaches it.
func checkPostgres(s *appsv1.StatefulSet, services []*corev1.Service, netpols []*networkingv1.NetworkPolicy, deps map[string]*appsv1.Deployment, o overlay) []error {
	var errs []error
	fail := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("StatefulSet "+s.Name+": "+format, a...))
	}
	if s.Spec.Replicas == nil || *s.Spec.Replicas != 1 {
		fail("want one server (replicas 1)")
	}
	spec := s.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		return append(errs, fmt.Errorf("StatefulSet %s: want one container", s.Name))
	}
	c := spec.Containers[0]
	if want := o.registry + "/jobs-postgres:" + o.tag["jobs-postgres"]; c.Image != want {
		fail("image %q, want %q", c.Image, want)
	}
	if strings.HasPrefix(o.registry, "localhost/") && c.ImagePullPolicy != corev1.PullNever {
		fail("imagePullPolicy %q: images imported into the node are never pulled", c.ImagePullPolicy)
	}
	env := containerEnv(spec.Containers, c.Name)
	pw := env["POSTGRES_PASSWORD"]
	if pw.ValueFrom == nil || pw.ValueFrom.SecretKeyRef == nil || pw.ValueFrom.SecretKeyRef.Name != jobsSecret ||
		pw.ValueFrom.SecretKeyRef.Key != "postgres-password" {
		fail("POSTGRES_PASSWORD must come from Secret %s, key postgres-password", jobsSecret)
	}
	// The data folder on a claim template (not the pod's life).
	data := env["PGDATA"].Value
	onClaim := false
	for _, m := range c.VolumeMounts {
		for _, t := range s.Spec.VolumeClaimTemplates {
			if m.Name == t.Name && data != "" && strings.HasPrefix(data, strings.TrimSuffix(m.MountPath, "/")+"/") {
				onClaim = true
			}
		}
	}
	if !onClaim {
		fail("PGDATA %q is not below a claim template's mount (one below the root: lost+found)", data)
	}
	if sc := spec.SecurityContext; sc == nil || sc.FSGroupChangePolicy == nil || *sc.FSGroupChangePolicy != corev1.FSGroupChangeOnRootMismatch {
		fail("fsGroupChangePolicy: want OnRootMismatch (a group-writable data folder stops the server)")
	}
	for _, p := range []struct {
		name string
		p    *corev1.Probe
	}{{"readiness", c.ReadinessProbe}, {"startup", c.StartupProbe}, {"liveness", c.LivenessProbe}} {
		if p.p == nil || p.p.Exec == nil || len(p.p.Exec.Command) == 0 || !strings.HasSuffix(p.p.Exec.Command[0], "/"+pgReadiness) {
			fail("%s probe: want %s", p.name, pgReadiness)
		}
	}
	// The clients' Service on the server's port (database-url names it),
	// and the governing Service of serviceName, headless (clusterIP: None)
	// as a StatefulSet's must be, so the pod has a DNS name of its own.
	served, governed := false, false
	for _, svc := range services {
		if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(s.Spec.Template.Labels)) {
			continue
		}
		for _, p := range svc.Spec.Ports {
			if p.Port != pgPort {
				continue
			}
			if svc.Name == pgName && svc.Spec.ClusterIP != corev1.ClusterIPNone {
				served = true
			}
			if svc.Name == s.Spec.ServiceName && svc.Spec.ClusterIP == corev1.ClusterIPNone {
				governed = true
			}
		}
	}
	if !served {
		fail("no Service %s on port %d selects it (database-url names it)", pgName, pgPort)
	}
	if !governed {
		fail("serviceName %q names no headless Service (clusterIP: None) on port %d selecting it", s.Spec.ServiceName, pgPort)
	}
	// The services may reach it: egress to its pods on its port (the base
	// denies egress by default).
	for _, name := range serviceNames {
		d := deps[name]
		if d == nil {
			continue
		}
		reach := false
		for _, np := range netpols {
			if !policySelects(np, d.Spec.Template.Labels) || !hasType(np, networkingv1.PolicyTypeEgress) {
				continue
			}
			for _, r := range np.Spec.Egress {
				port := false
				for _, p := range r.Ports {
					if p.Port != nil && (p.Port.IntValue() == pgPort || p.Port.String() == "postgres") {
						port = true
					}
				}
				for _, peer := range r.To {
					if peer.PodSelector == nil || peer.NamespaceSelector != nil || peer.IPBlock != nil {
						continue
					}
					ps, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
					if err == nil && ps.Matches(labels.Set(s.Spec.Template.Labels)) && port {
						reach = true
					}
				}
			}
		}
		if !reach {
			errs = append(errs, fmt.Errorf("NetworkPolicy: Deployment %s cannot reach the database (no egress to its pods on %d)", name, pgPort))
		}
	}
	// Only the services reach it.
	for _, np := range netpols {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || np.Spec.PodSelector.Size() == 0 || !sel.Matches(labels.Set(s.Spec.Template.Labels)) {
			continue
		}
		for _, rule := range np.Spec.Ingress {
			for _, peer := range rule.From {
				if peer.PodSelector == nil || peer.PodSelector.Size() == 0 || peer.NamespaceSelector != nil || peer.IPBlock != nil {
					errs = append(errs, fmt.Errorf("NetworkPolicy %s: the database admits more than the services' pods", np.Name))
					continue
				}
				ps, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
				if err != nil || ps.Matches(labels.Set(s.Spec.Template.Labels)) {
					errs = append(errs, fmt.Errorf("NetworkPolicy %s: its peer selector %v is wrong or selects the database itself", np.Name, peer.PodSelector))
					continue
				}
				for _, name := range serviceNames {
					if d := deps[name]; d != nil && !ps.Matches(labels.Set(d.Spec.Template.Labels)) {
						errs = append(errs, fmt.Errorf("NetworkPolicy %s: Deployment %s cannot reach the database", np.Name, name))
					}
				}
			}
		}
	}
	return errs
}

// containerEnv is the environment of the named container.
func containerEnv(cs []corev1.Container, name string) map[string]corev1.EnvVar {
	env := map[string]corev1.EnvVar{}
	for _, c := range cs {
		if c.Name == name {
			for _, e := range c.Env {
				env[e.Name] = e
			}
		}
	}
	return env
}

// claimAt is the claim holding path in the named container, or "".
func claimAt(spec corev1.PodSpec, name, path string) string {
	if path == "" {
		return ""
	}
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	for _, c := range spec.Containers {
		if c.Name != name {
			continue
		}
		for _, m := range c.VolumeMounts {
			mp := strings.TrimSuffix(m.MountPath, "/")
			if path == mp || strings.HasPrefix(path, mp+"/") {
				if v := vols[m.Name]; v.PersistentVolumeClaim != nil {
					return v.PersistentVolumeClaim.ClaimName
				}
			}
		}
	}
	return ""
}

// TestJobStoreChecksFail shows that the job store's checks catch each
// mistake: each case edits one overlay's rendering in one place.
func TestJobStoreChecksFail(t *testing.T) {
	all := overlays(t)
	byDir := map[string]overlay{}
	for _, o := range all {
		byDir[o.dir] = o
	}
	rendered := map[string]string{}
	v := version(t)
	cases := []struct {
		dir, name, old, new, want string
	}{
		{"overlays/cpu", "database optional", "              optional: false", "              optional: true", "JOBS_DATABASE_URL is optional"},
		{"overlays/cpu", "password as a literal", "- name: POSTGRES_PASSWORD\n          valueFrom:\n            secretKeyRef:\n              key: postgres-password\n              name: archivekit-jobs",
			"- name: POSTGRES_PASSWORD\n          value: hunter2", "POSTGRES_PASSWORD"},
		{"overlays/cpu", "no readiness", "        readinessProbe:\n          exec:\n            command:\n            - /usr/lib/postgresql/15/bin/pg_isready",
			"        readinessProbe:\n          exec:\n            command:\n            - /bin/true", "readiness probe"},
		{"overlays/cpu", "server of another version", "jobs-postgres:" + v, "jobs-postgres:9.9.9", "jobs-postgres"},
		{"overlays/cpu", "data at the volume root", "value: /var/lib/postgresql/data/pgdata", "value: /var/lib/postgresql/data", "PGDATA"},
		{"overlays/cpu", "two servers", "  replicas: 1\n  revisionHistoryLimit: 5\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: archivekit-postgres",
			"  replicas: 2\n  revisionHistoryLimit: 5\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: archivekit-postgres", "one server"},
		{"overlays/cpu", "database open to all", "    - podSelector:\n        matchExpressions:", "    - namespaceSelector: {}\n      podSelector:\n        matchExpressions:", "admits more"},
		{"overlays/cpu", "no Service", "  name: archivekit-postgres\nspec:\n  ports:\n  - name: postgres\n    port: 5432",
			"  name: archivekit-postgres\nspec:\n  ports:\n  - name: postgres\n    port: 5433", "no Service"},
		{"overlays/cpu", "serviceName not headless", "  clusterIP: None\n", "", "headless"},
		{"overlays/cpu", "serviceName of the clients' Service", "  serviceName: archivekit-postgres-headless", "  serviceName: archivekit-postgres", "headless"},
		{"overlays/cpu", "no egress to the database", "  egress:\n  - ports:\n    - port: 5432", "  egress:\n  - ports:\n    - port: 5433", "cannot reach the database"},
		{"overlays/local", "rolling update", "    type: Recreate", "    type: RollingUpdate", "Recreate"},
		{"overlays/local", "state folder on no claim", "        - name: JOBS_DIR\n          value: /jobs", "        - name: JOBS_DIR\n          value: /tmp/jobs", "on no claim"},
		{"overlays/local", "no state folder", "        - name: JOBS_DIR\n          value: /jobs\n", "", "no JOBS_DIR"},
	}
	for _, c := range cases {
		t.Run(c.dir+"/"+c.name, func(t *testing.T) {
			if _, ok := rendered[c.dir]; !ok {
				rendered[c.dir] = string(render(t, c.dir))
			}
			base := rendered[c.dir]
			if !strings.Contains(base, c.old) {
				t.Fatalf("the rendering has no %q to edit", c.old)
			}
			objs, err := decodeAll([]byte(strings.Replace(base, c.old, c.new, 1)))
			var errs []error
			if err != nil {
				errs = []error{err}
			} else {
				errs = check(objs, byDir[c.dir])
			}
			if !strings.Contains(fmt.Sprint(errs), c.want) {
				t.Errorf("want an error naming %q, got %v", c.want, errs)
			}
		})
	}
}
