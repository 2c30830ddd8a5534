package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/testenv"
)

// TestSkillDocuments: every skill document parses, and each heading the
// acceptance follows is there with its sh steps.
func TestSkillDocuments(t *testing.T) {
	for tool, want := range skillChecks {
		path := filepath.Join("..", "..", "docs", "skills", tool, "SKILL.md")
		steps, err := skillSteps(path, want...)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if !strings.HasPrefix(string(b), "---\nname: "+tool+"\ndescription: ") {
			t.Errorf("%s: no front matter naming the skill %s and its description", path, tool)
		}
		for _, ep := range []string{"/info", "/health\"", "/health?deep=true"} {
			if !strings.Contains(strings.Join(steps, ""), ep) {
				t.Errorf("%s: the steps never request %s", path, strings.Trim(ep, `"`))
			}
		}
	}
}

// TestReadSkillRejects: a step in another language, a block before any
// heading and an unclosed block are refused, so a skill cannot silently
// lose a step to a formatting slip.
func TestReadSkillRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"bash block":    "# a\n```bash\necho\n```\n",
		"before head":   "```sh\necho\n```\n# a\n",
		"unclosed":      "# a\n```sh\necho\n",
		"missing title": "# other\n```sh\necho\n```\n",
	} {
		path := filepath.Join(t.TempDir(), "SKILL.md")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := skillSteps(path, "a"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// buildCommands builds the named commands of cmd/ into one folder.
func buildCommands(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"build", "-o", dir + "/"}
	for _, n := range names {
		args = append(args, "../../cmd/"+n)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// TestSkillsLocally follows both skills' checks and sample requests, from
// their own text, against services started on this machine (the cluster
// run of make k8s-e2e follows their Kubernetes start too): what an agent
// given the skill would do, with a local MT stand-in behind translate-api.
func TestSkillsLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs both services")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("the skills' steps use curl, which is not installed")
	}
	bin := buildCommands(t, "pageclass-api", "pageclass-client", "translate-api")
	pages, err := samplePages(testenv.Data(t, "pages"))
	if err != nil {
		t.Fatal(err)
	}
	alto := filepath.Join(testenv.Data(t, "translator"), "alto", "MTX201501307_anon.alto.xml")
	mt, err := startStandIn("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mt.close()

	cfg, _ := filepath.Abs("../../setup/config.txt")
	pc := servicetest.Start(t, filepath.Join(bin, "pageclass-api"), []string{"LOG_FORMAT=json"},
		"-config", cfg, "-models", classifytest.Ensemble(t, t.TempDir()), "-demo", "")
	tr := servicetest.Start(t, filepath.Join(bin, "translate-api"), []string{"LOG_FORMAT=json",
		"TRANSLATION_BACKEND=mtapi", "TRANSLATION_URL=http://" + mt.ln.Addr().String()})
	pc.WaitReady(t, 2*time.Minute)
	tr.WaitReady(t, time.Minute)

	dir := t.TempDir()
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "PAGECLASS_URL=" + pc.Base, "TRANSLATE_URL=" + tr.Base,
		"SAMPLE_PAGE=" + pages[0], "SAMPLE_ALTO=" + alto}
	for _, tool := range []string{"pageclass-api", "translate-api"} {
		want := skillChecks[tool][1:] // the services are started above, not by kubectl
		out, err := runSkill(context.Background(), filepath.Join("..", "..", "docs", "skills", tool, "SKILL.md"), dir, env, want...)
		if err != nil {
			t.Fatalf("%v\nservice log:\n%s%s", err, pc.Log(), tr.Log())
		}
		if err := checkSkillOutput(tool, out, dir, alto); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: the skill's steps answered:\n%.1500s", tool, out)
	}
}
