// Command release-tags prints what a build publishes (spec
// page-classification 9 and translation 9: image tags and the promotion
// gate) as key=value lines for the code host's step outputs
// ($GITHUB_OUTPUT): publish, reason, build_tag, version, gated and
// promote_tags (space-separated). With --image it also prints build_ref
// (the image with its sha- tag) and service_image (the name with -api).
//
// Usage:
//
//	release-tags [--event E] [--ref R] [--sha S] [--image NAME]
//
// The defaults come from GITHUB_EVENT_NAME, GITHUB_REF and GITHUB_SHA. Exit
// 0 with the plan (also when it publishes nothing), 1 on a usage error.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"archivekit/internal/cliflags"
	"archivekit/internal/release"
)

func main() { os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr)) }

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := cliflags.New("release-tags", stderr)
	var e release.Event
	fs.StringVar(&e.Name, "event", getenv("GITHUB_EVENT_NAME"), "triggering event (push, release, pull_request, ...)")
	fs.StringVar(&e.Ref, "ref", getenv("GITHUB_REF"), "git ref (refs/heads/test, refs/tags/v1.2.0, ...)")
	fs.StringVar(&e.SHA, "sha", getenv("GITHUB_SHA"), "commit id")
	image := fs.String("image", "", "batch image name (registry/owner/tool) to print full references for")
	if code, stop := fs.Parse(args, stdout); stop {
		return code
	}
	p, err := release.PlanFor(e)
	if err != nil {
		fmt.Fprintln(stderr, "release-tags:", err)
		return 1
	}
	fmt.Fprintf(stdout, "publish=%t\nreason=%s\nbuild_tag=%s\nversion=%s\ngated=%t\npromote_tags=%s\n",
		p.Publish, p.Reason, p.BuildTag, p.Version, p.Gated, strings.Join(p.PromoteTags, " "))
	if *image != "" {
		if strings.Contains(release.LastPart(*image), ":") {
			fmt.Fprintf(stderr, "release-tags: --image %s: give the name without a tag\n", *image)
			return 1
		}
		ref := ""
		if p.Publish {
			ref = *image + ":" + p.BuildTag
		}
		fmt.Fprintf(stdout, "build_ref=%s\nservice_image=%s\n", ref, release.ServiceImage(*image))
	}
	return 0
}
