package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestReleaseTags(t *testing.T) {
	env := map[string]string{"GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/tags/v0.2.0-beta", "GITHUB_SHA": "89abcdef0123456789abcdef0123456789abcdef"}
	var out, errb bytes.Buffer
	if code := run([]string{"--image", "ghcr.io/org/translate"}, func(k string) string { return env[k] }, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "publish=true\nreason=version tag v0.2.0-beta\nbuild_tag=sha-89abcde\nversion=0.2.0-beta\ngated=true\npromote_tags=0.2.0-beta latest\n" +
		"build_ref=ghcr.io/org/translate:sha-89abcde\nservice_image=ghcr.io/org/translate-api\n"
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if code := run([]string{"--event", "push", "--ref", "refs/heads/master", "--image", "ghcr.io/org/translate"}, func(k string) string { return env[k] }, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "publish=false\nreason=branch master publishes nothing\nbuild_tag=\n") || !strings.Contains(out.String(), "build_ref=\n") {
		t.Errorf("master: %d %q", code, out.String())
	}
	errb.Reset()
	if code := run([]string{"--image", "ghcr.io/org/translate:1.0"}, func(k string) string { return env[k] }, &out, &errb); code != 1 || !strings.Contains(errb.String(), "without a tag") {
		t.Errorf("tagged image: %d %q", code, errb.String())
	}
	if code := run([]string{"--sha", "nothex"}, func(k string) string { return env[k] }, &out, &errb); code != 1 {
		t.Errorf("bad sha: exit %d", code)
	}
}
