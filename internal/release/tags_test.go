package release

import (
	"strings"
	"testing"
)

func TestPlanFor(t *testing.T) {
	const sha = "0123456789ABCDEF0123456789abcdef01234567"
	for _, c := range []struct {
		name, event, ref string
		publish, gated   bool
		build, version   string
		promote          string
	}{
		{"version tag", "push", "refs/tags/v1.2.0", true, true, "sha-0123456", "1.2.0", "1.2.0,latest"},
		{"beta version tag", "push", "refs/tags/v1.2.0-beta", true, true, "sha-0123456", "1.2.0-beta", "1.2.0-beta,latest"},
		{"published release", "release", "refs/tags/v2.0.0", true, true, "sha-0123456", "2.0.0", "2.0.0,latest"},
		{"test branch", "push", "refs/heads/test", true, false, "sha-0123456", "", "test"},
		{"master", "push", "refs/heads/master", false, false, "", "", ""},
		{"vit", "push", "refs/heads/vit", false, false, "", "", ""},
		{"pull request", "pull_request", "refs/pull/7/merge", false, false, "", "", ""},
		{"pull request from test", "pull_request", "refs/heads/test", false, false, "", "", ""},
		{"tag without v", "push", "refs/tags/1.2.0", false, false, "", "", ""},
		{"other tag", "push", "refs/tags/vit-demo", false, false, "", "", ""},
		{"manual run on a tag", "workflow_dispatch", "refs/tags/v1.2.0", false, false, "", "", ""},
	} {
		p, err := PlanFor(Event{Name: c.event, Ref: c.ref, SHA: sha})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.Publish != c.publish || p.Gated != c.gated || p.BuildTag != c.build || p.Version != c.version || strings.Join(p.PromoteTags, ",") != c.promote {
			t.Errorf("%s: %+v", c.name, p)
		}
		if p.Reason == "" {
			t.Errorf("%s: no reason", c.name)
		}
		for _, tag := range p.PromoteTags {
			if strings.HasPrefix(tag, "v") || strings.Contains(tag, "api") {
				t.Errorf("%s: tag %q (v stripped; -api belongs to the name)", c.name, tag)
			}
		}
	}
	if _, err := PlanFor(Event{Name: "push", Ref: "refs/heads/test", SHA: "xyz"}); err == nil {
		t.Error("a bad commit id was accepted")
	}
}

func TestServiceImage(t *testing.T) {
	for in, want := range map[string]string{
		"ghcr.io/org/pageclass":          "ghcr.io/org/pageclass-api",
		"localhost:5000/translate:1.2.0": "localhost:5000/translate-api:1.2.0",
		"translate":                      "translate-api",
	} {
		if got := ServiceImage(in); got != want {
			t.Errorf("ServiceImage(%q) = %q, want %q", in, got, want)
		}
	}
}
