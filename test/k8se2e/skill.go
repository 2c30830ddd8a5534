package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// skillSection is the shell of one heading of a skill document: every
// fenced block marked sh under that heading (and its subheadings' until the
// next heading of any level), in the order written.
type skillSection struct {
	Heading string
	Blocks  []string
}

// readSkill splits a skill document (docs/skills/*/SKILL.md) into its
// headings and their sh blocks. A heading is found by a prefix of its title
// (without the leading #s), so "2. Check it" is found as "2. Check".
func readSkill(path string) ([]skillSection, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var secs []skillSection
	var block *strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case block != nil && strings.TrimSpace(line) == "```":
			secs[len(secs)-1].Blocks = append(secs[len(secs)-1].Blocks, block.String())
			block = nil
		case block != nil:
			block.WriteString(line + "\n")
		case strings.HasPrefix(line, "```"):
			lang := strings.TrimSpace(strings.TrimPrefix(line, "```"))
			if lang != "sh" {
				return nil, fmt.Errorf("%s:%d: a code block marked %q: the steps are sh blocks", path, n, lang)
			}
			if len(secs) == 0 {
				return nil, fmt.Errorf("%s:%d: a code block before the first heading", path, n)
			}
			block = new(strings.Builder)
		case strings.HasPrefix(line, "#"):
			secs = append(secs, skillSection{Heading: strings.TrimSpace(strings.TrimLeft(line, "#"))})
		}
	}
	if block != nil {
		return nil, fmt.Errorf("%s: a code block is not closed", path)
	}
	return secs, sc.Err()
}

// skillSteps returns the sh blocks of the headings starting with each of
// want, in want's order; a heading missing or without a block is an error,
// so a skill rewritten without a step fails its check.
func skillSteps(path string, want ...string) ([]string, error) {
	secs, err := readSkill(path)
	if err != nil {
		return nil, err
	}
	var steps []string
	for _, w := range want {
		found := false
		for _, s := range secs {
			if strings.HasPrefix(s.Heading, w) {
				if len(s.Blocks) == 0 {
					return nil, fmt.Errorf("%s: heading %q has no sh block", path, s.Heading)
				}
				steps, found = append(steps, s.Blocks...), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: no heading %q", path, w)
		}
	}
	return steps, nil
}

// runSkill runs the steps of the skill at path under the headings want,
// each block in its own bash -eu in dir with env added to this process's
// environment, as an agent following the skill would type them. It returns
// everything the blocks printed; the first block that fails stops it.
func runSkill(ctx context.Context, path, dir string, env []string, want ...string) (string, error) {
	steps, err := skillSteps(path, want...)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	for i, s := range steps {
		ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-eu", "-o", "pipefail", "-c", s)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = &out, &out
		fmt.Fprintf(&out, "$ %s", s)
		err := cmd.Run()
		cancel()
		if err != nil {
			return out.String(), fmt.Errorf("%s: step %d of %d failed (%v):\n%s", path, i+1, len(steps), err, out.String())
		}
	}
	return out.String(), nil
}

// skillChecks are the headings of each skill that the acceptance follows:
// the Kubernetes start, the checks and the sample request.
var skillChecks = map[string][]string{
	"pageclass-api": {"On Kubernetes", "2. Check it", "3. Classify the sample page"},
	"translate-api": {"On Kubernetes", "2. Check it", "3. Translate the sample file"},
}

// skill is step 3: orchestrator acceptance item 5 of page-classification
// spec 9. "A fresh agent given only the task" is out of reach here; what
// the skill tells an agent to do is done instead, from the skill's own
// text, against the cluster: the manifests of this run applied again and
// rolled out, /info, /health and /health?deep=true through the Service, and
// the sample request.
func (d *driver) skill() error {
	kubectl, err := exec.LookPath(d.kubectl)
	if err != nil {
		return err
	}
	page, err := samplePages(filepath.Join(d.shared, "data", "pages"))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "k8se2e-skill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	manifests := filepath.Join(d.repo, services)
	env := []string{
		"KUBECONFIG=" + d.kubeconfig, "NAMESPACE=" + ns,
		"PATH=" + filepath.Dir(kubectl) + ":" + d.bin + ":" + os.Getenv("PATH"),
		"PAGECLASS_MANIFESTS=" + manifests, "TRANSLATE_MANIFESTS=" + manifests,
		"SAMPLE_PAGE=" + page[0], "SAMPLE_ALTO=" + d.altoPath(),
	}
	figures := map[string]any{}
	for _, tool := range []string{"pageclass-api", "translate-api"} {
		url, err := d.serviceURL(tool)
		if err != nil {
			return err
		}
		t := time.Now()
		out, err := runSkill(context.Background(), filepath.Join(d.repo, "docs", "skills", tool, "SKILL.md"), dir,
			append(env, "PAGECLASS_URL="+url, "TRANSLATE_URL="+url), skillChecks[tool]...)
		if err != nil {
			return fmt.Errorf("%s: %v", tool, err)
		}
		if err := checkSkillOutput(tool, out, dir, d.altoPath()); err != nil {
			return err
		}
		figures[tool] = map[string]any{"steps": skillChecks[tool], "s": secs(time.Since(t))}
		fmt.Printf("k8se2e: %s: the skill's steps (%s) passed\n", tool, strings.Join(skillChecks[tool], "; "))
	}
	d.report["skill"] = figures
	return nil
}

// checkSkillOutput checks what the skill's last step says a good answer
// is: three ranked categories for the page; an ALTO file with as many
// String elements as the sample for the translation.
func checkSkillOutput(tool, out, dir, sampleALTO string) error {
	switch tool {
	case "pageclass-api":
		for _, rank := range []string{"  1. ", "  2. ", "  3. "} {
			if !strings.Contains(out, rank) {
				return fmt.Errorf("pageclass-api: the client's answer has no rank %q:\n%s", strings.TrimSpace(rank), out)
			}
		}
		if !strings.Contains(out, `"predictions"`) {
			return fmt.Errorf("pageclass-api: the request by hand answered no predictions:\n%s", out)
		}
	case "translate-api":
		b, err := os.ReadFile(filepath.Join(dir, "translated.alto.xml"))
		if err != nil {
			return fmt.Errorf("translate-api: %v\n%s", err, out)
		}
		in, err := os.ReadFile(sampleALTO)
		if err != nil {
			return err
		}
		n, m := bytes.Count(in, []byte("<String ")), bytes.Count(b, []byte("<String "))
		if n == 0 || m != n || bytes.Equal(in, b) {
			return fmt.Errorf("translate-api: translated.alto.xml has %d String elements, the sample %d (identical: %v): %.200s", m, n, bytes.Equal(in, b), b)
		}
	}
	return nil
}
