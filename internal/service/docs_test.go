package service

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsRenderInChromium loads /docs in headless Chromium and checks that
// the renderer turned /openapi.json into operations with try-it forms. The
// screenshot is kept as testdata/docs-screenshot.png when
// ARCHIVEKIT_KEEP_SCREENSHOTS is set. Skipped where no Chromium is installed.
func TestDocsRenderInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" || testing.Short() {
		t.Skip("no Chromium on PATH")
	}
	tool, err := os.ReadFile(filepath.Join("testdata", "openapi_tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc, srv, _ := testService(t, env{}, Options{OpenAPI: tool})
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	profile := t.TempDir()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--user-data-dir=" + profile, "--virtual-time-budget=5000"}
	out, err := exec.Command(browser, append(args, "--dump-dom", srv.URL+"/docs")...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	for _, want := range []string{
		`<h1 id="title">test-api</h1>`,
		"version 1.2.3 · OpenAPI 3.1.0",
		`<span class="path">/upload</span>`,
		`<span class="path">/health</span>`,
		"Count the bytes of an upload",
		"Send POST /upload",
		`type="file" name="file"`,
		"HTTPValidationError",
		"[one of \"ok\", \"starting\", \"degraded\", \"draining\"]",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
	if strings.Contains(dom, "Could not load") {
		t.Error("renderer reported a load failure")
	}
	if dir := os.Getenv("ARCHIVEKIT_KEEP_SCREENSHOTS"); dir != "" {
		shot := filepath.Join(dir, "docs-screenshot.png")
		cmd := exec.Command(browser, append(args, "--window-size=1200,1600", "--screenshot="+shot, srv.URL+"/docs#upload")...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("screenshot: %v\n%s", err, b)
		}
	}
}
