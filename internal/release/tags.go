package release

import (
	"fmt"
	"strings"
)

// Event is what triggered a build on the code host (the GitHub Actions
// variables GITHUB_EVENT_NAME, GITHUB_REF and GITHUB_SHA).
type Event struct {
	Name, Ref, SHA string
}

// Plan is what a build publishes (spec page-classification 9, "Container
// images and tags"; translation 9).
type Plan struct {
	// Publish is false for builds that publish nothing (pull requests,
	// pushes to other branches, other tags); Reason says why.
	Publish bool
	Reason  string
	// BuildTag is sha-<short>: step 1 of the gate pushes only this tag.
	BuildTag string
	// Version is the release version with the leading v stripped (version
	// tags and published releases only).
	Version string
	// Gated reports that the blocking scan (step 3) must pass before
	// PromoteTags are applied: true for version tags.
	Gated bool
	// PromoteTags are applied to the digest of BuildTag in step 4: the
	// version and latest for a version tag, test for the test branch.
	PromoteTags []string
}

// TestBranch is the branch whose pushes publish the test tag.
const TestBranch = "test"

// PlanFor decides what a build publishes:
//   - a push to the test branch: sha-<short>, then test;
//   - a push of a v* tag or a published release of one: sha-<short>, then,
//     only after the gate, <version> (v stripped, beta versions included)
//     and latest;
//   - anything else (pull requests, other branches such as master or vit,
//     other tags, manual runs): nothing.
func PlanFor(e Event) (Plan, error) {
	sha := strings.ToLower(strings.TrimSpace(e.SHA))
	if len(sha) < 7 || strings.Trim(sha, "0123456789abcdef") != "" {
		return Plan{}, fmt.Errorf("commit %q: want a hexadecimal commit id of at least 7 digits", e.SHA)
	}
	p := Plan{BuildTag: "sha-" + sha[:7]}
	switch {
	case e.Name != "push" && e.Name != "release":
		p.Reason = fmt.Sprintf("event %q publishes nothing (only a push to %s, a version tag or a published release do)", e.Name, TestBranch)
	case e.Ref == "refs/heads/"+TestBranch && e.Name == "push":
		p.Publish, p.PromoteTags, p.Reason = true, []string{TestBranch}, "push to the test branch"
	case strings.HasPrefix(e.Ref, "refs/heads/"):
		p.Reason = fmt.Sprintf("branch %s publishes nothing", strings.TrimPrefix(e.Ref, "refs/heads/"))
	case strings.HasPrefix(e.Ref, "refs/tags/"):
		tag := strings.TrimPrefix(e.Ref, "refs/tags/")
		if !strings.HasPrefix(tag, "v") || !IsVersionTag(tag) {
			p.Reason = fmt.Sprintf("tag %s is not a version tag (v followed by a version)", tag)
			break
		}
		p.Publish, p.Gated, p.Version = true, true, Normalise(tag)
		p.PromoteTags, p.Reason = []string{p.Version, "latest"}, "version tag "+tag
	default:
		p.Reason = fmt.Sprintf("ref %q publishes nothing", e.Ref)
	}
	if !p.Publish {
		p.BuildTag = ""
	}
	return p, nil
}

// ServiceImage is the registry name of a tool's HTTP-service image: the
// batch image's name plus -api (the suffix belongs to the name, never to the
// tag).
func ServiceImage(batch string) string {
	name, tag, hasTag := strings.Cut(LastPart(batch), ":")
	prefix := strings.TrimSuffix(batch, LastPart(batch))
	if hasTag {
		return prefix + name + "-api:" + tag
	}
	return prefix + name + "-api"
}

// LastPart is the last path element of an image reference (name[:tag]).
func LastPart(ref string) string {
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		return ref[i+1:]
	}
	return ref
}
