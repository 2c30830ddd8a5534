package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	pngenc "image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"archivekit/internal/book/booktest"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// shownMotivations are the motivations whose annotations Mirador's
// annotation panel lists with its default settings
// (annotations.filteredMotivations of Mirador 3.4.3 and 4.0.0).
var shownMotivations = []string{"oa:commenting", "oa:tagging", "sc:painting", "commenting", "tagging"}

// publisherMotivations are those a publisher adds to that setting to list
// the translations (v3 supplementing) and the classes (classifying) too:
// the setting docs/translate.md and docs/pageclass.md give.
var publisherMotivations = append(slices.Clone(shownMotivations), "supplementing", "classifying", "oa:classifying")

// TestBookOutMirador opens what translate --book-out and pageclass
// --book-out publish in Mirador, the IIIF viewer (each release pinned in
// test/mirador.txt, fetched by make mirador), in headless Chromium: a
// three-page book served over HTTP on localhost (a Czech ALTO page of
// rectangles, an eScriptorium ALTO page of polygons, a blank page the
// review table flags), translated, then classified from the translation's
// derived manifest, both outputs served where --book-base-url says.
// Mirador opens the last derived manifest; for each canvas the test checks
// that its image was requested and answered, and that Mirador's annotation
// panel lists exactly the annotations the pages hold whose motivation the
// viewer's settings show, each with its text, and that Mirador draws the
// outline of each polygon line and the box of each other line it lists: with Mirador's default settings
// (v2 translations and the review flag) and with the motivations a
// publisher adds (supplementing, classifying).
// Presentation 3 and 2.
func TestBookOutMirador(t *testing.T) {
	releases := miradorReleases(t, repoRoot(t))
	root, bin := buildTools(t)
	czech, err := os.ReadFile(testenv.Path(t, "alto/MTX201501307_anon.alto.xml"))
	if err != nil {
		t.Fatal(err)
	}
	czech = firstALTOPage(t, czech)
	// eScriptorium's lines are polygons: their annotations target a
	// selector (v3 SvgSelector beside the box; v2 oa:SpecificResource).
	hebrew, err := os.ReadFile(filepath.Join(root, "internal/translate/alto/testdata/real/escriptorium_hebrew_bsb00084914-00007.alto.xml"))
	if err != nil {
		t.Fatal(err)
	}
	// a blank page, which the review table flags (near_blank)
	blank := filepath.Join(t.TempDir(), "blank.png")
	white := image.NewGray(image.Rect(0, 0, 400, 560))
	for i := range white.Pix {
		white.Pix[i] = 255
	}
	var png bytes.Buffer
	if err := pngenc.Encode(&png, white); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blank, png.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// The source language is detected: the Czech page's blocks are Czech;
	// the Hebrew page's first block declares LANG="heb" (he-en is
	// offered), its other blocks, in Hebrew script without a LANG, are
	// left as they are (no supported language is written in it).
	api := translatortest.New(translatortest.Config{Pairs: []string{"cs-en", "sk-en", "pl-en", "de-en", "he-en"}})
	defer api.Close()
	ctx := testenv.Chromium(t, 3*time.Minute)
	for _, v3 := range []bool{true, false} {
		name := map[bool]string{true: "Presentation 3", false: "Presentation 2"}[v3]
		t.Run(name, func(t *testing.T) {
			s := booktest.New(t, append(classifytest.Pages(t, 1)[:2], blank), 3, v3)
			// Level 0 services: Mirador draws them from their listed
			// sizes, which the stand-in answers (it answers no regions,
			// so a level 1 or 2 service's tiles would be refused).
			s.Levels = []int{0, 0, 0}
			s.SetText(0, czech, "application/alto+xml", "http://www.loc.gov/standards/alto/ns-v3#")
			s.SetText(1, hebrew, "application/alto+xml", "http://www.loc.gov/standards/alto/ns-v4#")
			work := t.TempDir()
			pub := httptest.NewServer(publisher(work, releases))
			defer pub.Close()
			derived := chainBookOut(t, root, bin, api.URL, "auto", s, work, pub.URL+"/t/", pub.URL+"/c/")
			manifestURL := pub.URL + "/c/" + filepath.Base(derived)
			canvases := readCanvases(t, derived, v3)
			want := make([][]shownAnnotation, len(canvases))
			for i, c := range canvases {
				for _, page := range c.annotations {
					want[i] = append(want[i], readShownAnnotations(t, filepath.Join(work, strings.TrimPrefix(page, pub.URL+"/")), v3)...)
				}
			}
			for _, release := range releases {
				for _, motivations := range [][]string{nil, publisherMotivations} {
					label := fmt.Sprintf("Mirador %s, %s settings", release.version, map[bool]string{true: "default", false: "publisher's"}[motivations == nil])
					s.Reset()
					start := time.Now()
					// a canvas is shown once its image was requested and answered
					drawn := func(i int) bool { _, _, sizes, _ := s.Served(); return sizes[i] != "" }
					lines := make([]shapes, len(canvases))
					for i := range canvases {
						_, lines[i] = listed(want[i], map[bool][]string{true: shownMotivations, false: motivations}[motivations == nil])
					}
					got := openInMirador(t, ctx, viewerURL(pub.URL, release.version, manifestURL, motivations), lines, drawn)
					took := time.Since(start)
					checkPanel(t, label, v3, motivations, canvases, want, got)
					_, denied, sizes, _ := s.Served()
					if len(denied) > 0 {
						t.Errorf("%s: image requests refused: %v", label, denied)
					}
					t.Logf("%s: the panel lists %d, %d and %d annotations on the three canvases, %v outlines and boxes drawn (images at sizes %v; %.1f s)", label, len(got[0]), len(got[1]), len(got[2]), lines, sizes, took.Seconds())
				}
			}
		})
	}
}

// checkPanel compares what Mirador's annotation panel listed on each
// canvas (got) with the annotations of its pages (want) whose motivation
// the settings show (motivations; nil: Mirador's default), and with what
// docs/pageclass.md says a user sees.
func checkPanel(t *testing.T, label string, v3 bool, motivations []string, canvases []canvas, want [][]shownAnnotation, got [][]string) {
	t.Helper()
	shown := motivations
	if shown == nil {
		shown = shownMotivations
	}
	for i, c := range canvases {
		if w, _ := listed(want[i], shown); !slices.Equal(got[i], w) {
			t.Errorf("%s: canvas %s: Mirador's annotation panel lists %q, want %q", label, c.id, got[i], w)
		}
	}
	for i, g := range got {
		lines, classes, flags := kinds(g)
		// v3 translations are supplementing: listed only with the
		// publisher's settings; v2 ones are sc:painting
		wantLines := i < 2 && (motivations != nil || !v3)
		wantClasses := motivations != nil
		if (lines > 0) != wantLines || (classes > 0) != wantClasses || flags != map[bool]int{true: 1, false: 0}[i == 2] {
			t.Errorf("%s: canvas %d: Mirador lists %d translated lines, %d classes and %d review flags; want lines %v, classes %v and the blank page's flag (update the docs if Mirador changed)",
				label, i+1, lines, classes, flags, wantLines, wantClasses)
		}
	}
}

// listed are the texts of the annotations whose motivation is one of
// shown, sorted: what Mirador's panel lists of them; and how many of
// them have an outline (SvgSelector) or a box (xywh), which Mirador draws
// on the image.
func listed(annotations []shownAnnotation, shown []string) (texts []string, drawn shapes) {
	for _, a := range annotations {
		if slices.ContainsFunc(a.motivations, func(m string) bool { return slices.Contains(shown, m) }) {
			texts = append(texts, a.text)
			switch {
			case a.outline:
				drawn.Outlines++
			case a.box:
				drawn.Boxes++
			}
		}
	}
	slices.Sort(texts)
	return texts, drawn
}

// kinds counts the texts a panel lists by what they are: a page class (a
// category name), a review flag ("needs review: ..."), else a translated
// line.
func kinds(texts []string) (lines, classes, flags int) {
	for _, x := range texts {
		switch {
		case slices.Contains(modelmeta.Categories, x):
			classes++
		case strings.HasPrefix(x, "needs review: "):
			flags++
		default:
			lines++
		}
	}
	return lines, classes, flags
}

// firstALTOPage cuts an ALTO file to its first Page (the shared sample
// is a whole report of 79 pages, 2,095 lines).
func firstALTOPage(t *testing.T, b []byte) []byte {
	t.Helper()
	s := string(b)
	end, layout := strings.Index(s, "</Page>"), strings.LastIndex(s, "</Layout>")
	if end < 0 || layout < end {
		t.Fatal("the sample ALTO file has no Page in its Layout")
	}
	return []byte(s[:end+len("</Page>")] + "\n" + s[layout:])
}

// miradorRelease is a release of Mirador pinned in test/mirador.txt and
// its built bundle.
type miradorRelease struct{ version, bundle string }

// miradorReleases are the releases pinned in test/mirador.txt, their
// bundles under ARCHIVEKIT_MIRADOR (make mirador's cache entry, set by
// make test and make env); the test is skipped when it is not set.
func miradorReleases(t *testing.T, root string) []miradorRelease {
	t.Helper()
	var out []miradorRelease
	for _, p := range viewerPins(t, root, "mirador", "Mirador") {
		out = append(out, miradorRelease{p.version, filepath.Join(p.dir, "dist", "mirador.min.js")})
	}
	return out
}

// viewerPin is a viewer release pinned in test/mirador.txt and the folder
// make mirador keeps it in.
type viewerPin struct{ version, dir string }

// viewerPins are the releases of the viewer named kind (the lines' first
// field: mirador, universalviewer) pinned in test/mirador.txt, each in its
// folder under ARCHIVEKIT_MIRADOR (make mirador's cache entry, set by make
// test and make env; the Universal Viewer's under uv-<version>), which must
// exist; the test is skipped when it is not set.
func viewerPins(t *testing.T, root, kind, name string) []viewerPin {
	t.Helper()
	dir := os.Getenv("ARCHIVEKIT_MIRADOR")
	if dir == "" {
		t.Skipf("needs %s: make mirador, then ARCHIVEKIT_MIRADOR=<its cache entry> (make test and eval \"$(make -s env)\" set it)", name)
	}
	pins, err := os.ReadFile(filepath.Join(root, "test", "mirador.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []viewerPin
	for _, line := range strings.Split(string(pins), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == kind {
			p := viewerPin{f[1], filepath.Join(dir, f[1])}
			if kind == "universalviewer" {
				p.dir = filepath.Join(dir, "uv-"+f[1])
			}
			if _, err := os.Stat(p.dir); err != nil {
				t.Fatalf("ARCHIVEKIT_MIRADOR: %s %s: %v (make mirador fetches it)", name, p.version, err)
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("test/mirador.txt pins no %s release", name)
	}
	return out
}

// publisher serves the outputs folder as a publisher does (t/ the
// translation's, c/ the classes'), each release's bundle at
// /mirador-<version>.min.js and the viewer's page at /viewer.html
// (viewerURL).
func publisher(work string, releases []miradorRelease) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/t/", http.FileServer(http.Dir(work)))
	mux.Handle("/c/", http.FileServer(http.Dir(work)))
	for _, r := range releases {
		mux.HandleFunc("/mirador-"+r.version+".min.js", func(w http.ResponseWriter, req *http.Request) { http.ServeFile(w, req, r.bundle) })
	}
	mux.HandleFunc("/viewer.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, viewerPage, url.PathEscape(r.URL.Query().Get("mirador")))
	})
	return mux
}

// viewerPage is the plain page a publisher puts Mirador on: the bundle
// (%s: its version) and one call, its settings (JSON) in the page's query
// string; before Mirador, a script that records the shapes it draws.
const viewerPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Mirador</title></head>
<body><div id="viewer" style="position:absolute;inset:0"></div>
<script>
// Mirador draws each outline (SvgSelector) as a Path2D of a path's d and
// each box (xywh) with strokeRect: the distinct ones drawn so far (the
// test clears them between canvases).
window.drawn = {outlines: new Set(), boxes: new Set()};
const BrowserPath2D = window.Path2D;
window.Path2D = function (d) {
  if (typeof d === "string") window.drawn.outlines.add(d);
  return new BrowserPath2D(d);
};
const strokeRect = CanvasRenderingContext2D.prototype.strokeRect;
CanvasRenderingContext2D.prototype.strokeRect = function (x, y, w, h) {
  window.drawn.boxes.add([x, y, w, h].join(","));
  return strokeRect.call(this, x, y, w, h);
};
</script>
<script src="/mirador-%s.min.js"></script>
<script>
window.mirador = Mirador.viewer(JSON.parse(new URLSearchParams(location.search).get("config")));
</script></body></html>`

// viewerURL is the address of the viewer's page on Mirador version,
// opening manifestURL in one window with its annotation panel open and
// every annotation listed drawn on the image ("Highlight all");
// motivations, when not nil, are the panel's
// annotations.filteredMotivations.
func viewerURL(base, version, manifestURL string, motivations []string) string {
	cfg := map[string]any{
		"id":      "viewer",
		"windows": []any{map[string]any{"id": "w", "manifestId": manifestURL, "sideBarOpen": true, "sideBarPanel": "annotations"}},
		// the panel's "Highlight all": every annotation listed is drawn
		"window": map[string]any{"highlightAllAnnotations": true},
	}
	if motivations != nil {
		cfg["annotations"] = map[string]any{"filteredMotivations": motivations}
	}
	config, _ := json.Marshal(cfg)
	return base + "/viewer.html?" + url.Values{"mirador": {version}, "config": {string(config)}}.Encode()
}

// chainBookOut runs translate --book-out on the book's manifest into
// work/t and pageclass --book-out on the translation's derived manifest
// into work/c, with the given base URLs, translating from src (a
// language code or auto); it returns the last derived
// manifest (translations and classes).
func chainBookOut(t *testing.T, root, bin, apiURL, src string, s *booktest.Server, work, tBase, cBase string) string {
	t.Helper()
	runIn(t, work, []string{"TRANSLATION_URL=" + apiURL},
		filepath.Join(bin, "translate"), s.ManifestURL(), "-o", "t", "--vocabulary", "", "-src", src,
		"--book-out", "--book-base-url", tBase)
	derived, _ := filepath.Glob(filepath.Join(work, "t", "*_en.json"))
	if len(derived) != 1 {
		entries, _ := os.ReadDir(filepath.Join(work, "t"))
		t.Fatalf("translate --book-out: derived manifests %v in %v", derived, entries)
	}
	// run from the tree, whose weights/demo holds the shipped models
	runIn(t, root, nil, filepath.Join(bin, "pageclass"), "-f", derived[0], "--fetch-private", "--results", filepath.Join(work, "r"),
		"--book-out", filepath.Join(work, "c"), "--book-base-url", cBase)
	both, _ := filepath.Glob(filepath.Join(work, "c", "*_classes.json"))
	if len(both) != 1 {
		t.Fatalf("pageclass --book-out: derived manifests %v", both)
	}
	return both[0]
}

// shownAnnotation is an annotation as Mirador's panel would list it: its
// motivations and its text (v3 the body values, v2 the resource's chars),
// and whether its target has an SvgSelector (a polygon line's outline)
// or else an xywh box.
type shownAnnotation struct {
	motivations []string
	text        string
	outline     bool
	box         bool
}

// shapes counts the lines Mirador draws on a canvas: outlines (an
// SvgSelector's path) and boxes (xywh).
type shapes struct{ Outlines, Boxes int }

// readShownAnnotations reads an annotation page (v2: list) as written.
func readShownAnnotations(t *testing.T, path string, v3 bool) []shownAnnotation {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// the annotations, each one's body and the body's text
	keys := map[bool][4]string{true: {"items", "body", "value", "target"}, false: {"resources", "resource", "chars", "on"}}[v3]
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []shownAnnotation
	for _, a := range oneOrMany[map[string]json.RawMessage](t, doc[keys[0]]) {
		var texts []string
		for _, body := range oneOrMany[map[string]json.RawMessage](t, a[keys[1]]) {
			var text string
			json.Unmarshal(body[keys[2]], &text)
			texts = append(texts, text)
		}
		outline := bytes.Contains(a[keys[3]], []byte("SvgSelector"))
		box := !outline && bytes.Contains(a[keys[3]], []byte("xywh="))
		out = append(out, shownAnnotation{oneOrMany[string](t, a["motivation"]), strings.Join(texts, " "), outline, box})
	}
	return out
}

// oneOrMany decodes a JSON-LD value that is one T or a list of them.
func oneOrMany[T any](t *testing.T, raw json.RawMessage) []T {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var list []T
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one T
	if err := json.Unmarshal(raw, &one); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return []T{one}
}

// openInMirador opens the viewer's page (viewerURL) and returns, per
// canvas, the texts Mirador's annotation panel lists (sorted), going to
// the next canvas with the window's "Next item" button. On each canvas it
// waits until Mirador has received every annotation page of it, the panel
// lists as many annotations as Mirador's state shows for it, and
// imageShown(canvas index) holds; then that Mirador drew (at least)
// (at least) lines[canvas index] distinct outlines and boxes on the image.
func openInMirador(t *testing.T, ctx context.Context, page string, lines []shapes, imageShown func(int) bool) [][]string {
	t.Helper()
	var mu sync.Mutex
	var thrown []string // JS exceptions, appended by chromedp's event goroutine
	jsErrors := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(thrown)
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chromedp.ListenTarget(lctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			thrown = append(thrown, e.ExceptionDetails.Error())
			mu.Unlock()
		}
	})
	// WaitReady, a query, before the Polls below: a Poll right after a
	// navigation can run in the context of the page navigated from.
	if err := chromedp.Run(ctx, chromedp.Navigate(page), chromedp.WaitReady("body", chromedp.ByQuery)); err != nil {
		t.Fatalf("open %s: %v", page, err)
	}
	var out [][]string
	for i := range lines {
		if i > 0 {
			if err := chromedp.Run(ctx, chromedp.Evaluate("window.drawn.outlines.clear(); window.drawn.boxes.clear()", nil),
				chromedp.Click(`button[aria-label="Next item"]`, chromedp.ByQuery)); err != nil {
				t.Fatalf("Mirador: next canvas: %v", err)
			}
		}
		var shown struct {
			Canvas string   `json:"canvas"`
			Texts  []string `json:"texts"`
			Error  string   `json:"error"`
		}
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		err := chromedp.Run(wctx, chromedp.Poll(fmt.Sprintf(panelJS, i), &shown, chromedp.WithPollingInterval(50*time.Millisecond)))
		wcancel()
		if err != nil {
			var state string
			chromedp.Run(ctx, chromedp.Evaluate(diagnosisJS, &state))
			t.Fatalf("Mirador, canvas %d: %v (JS errors %q)\nwhat Mirador has: %s", i+1, err, jsErrors(), state)
		}
		if shown.Error != "" {
			t.Fatalf("Mirador, canvas %d (%s): %s", i+1, shown.Canvas, shown.Error)
		}
		if !testenv.WaitFor(30*time.Second, func() bool { return imageShown(i) }) {
			t.Fatalf("Mirador, canvas %d (%s): its image was not requested", i+1, shown.Canvas)
		}
		var drawn shapes
		wctx, wcancel = context.WithTimeout(ctx, 10*time.Second)
		err = chromedp.Run(wctx, chromedp.Poll(fmt.Sprintf("window.drawn.outlines.size >= %d && window.drawn.boxes.size >= %d ? [] : null", lines[i].Outlines, lines[i].Boxes),
			nil, chromedp.WithPollingInterval(50*time.Millisecond)))
		wcancel()
		if err != nil {
			chromedp.Run(ctx, chromedp.Evaluate("({Outlines: window.drawn.outlines.size, Boxes: window.drawn.boxes.size})", &drawn))
			t.Errorf("Mirador, canvas %d (%s): drew %d outlines and %d boxes on the image, want the %d polygon lines' and the %d other lines' (Mirador draws an SvgSelector's <path> elements only)",
				i+1, shown.Canvas, drawn.Outlines, drawn.Boxes, lines[i].Outlines, lines[i].Boxes)
		}
		slices.Sort(shown.Texts)
		out = append(out, shown.Texts)
	}
	if e := jsErrors(); len(e) > 0 {
		t.Errorf("Mirador: JS exceptions %q", e)
	}
	return out
}

// diagnosisJS says what Mirador has when panelJS never answered: the
// canvas shown, each annotation page it holds (fetching, failed or read,
// with the count of its annotations), the panel's items and any errors.
const diagnosisJS = `(() => {
  const st = window.mirador && window.mirador.store.getState();
  if (!st) return "Mirador did not start";
  const pages = {};
  for (const [canvas, byPage] of Object.entries(st.annotations)) {
    for (const [id, p] of Object.entries(byPage)) {
      pages[id] = {canvas, fetching: p.isFetching, error: p.error, annotations: p.json && (p.json.items || p.json.resources || []).length};
    }
  }
  const manifests = Object.fromEntries(Object.entries(st.manifests).map(([id, m]) => [id, {fetching: m.isFetching, error: m.error}]));
  return JSON.stringify({manifests, canvas: st.windows.w && st.windows.w.canvasId, pages,
    panelItems: document.querySelectorAll("li[annotationid]").length, errors: st.errors});
})()`

// panelJS (%d: the canvas's index) answers, once Mirador shows that
// canvas, has every annotation page of it (received or failed) and its
// panel lists as many annotations as the state says it shows, the
// canvas id, the texts listed and any error Mirador recorded; until then
// it answers nothing (chromedp.Poll tries again).
const panelJS = `(() => {
  const st = window.mirador && window.mirador.store.getState();
  if (!st) return null;
  const m = Object.values(st.manifests)[0];
  if (!m || m.isFetching) return null;
  if (m.error) return {error: "manifest: " + m.error};
  const win = st.windows.w;
  const canvas = m.json.items ? m.json.items[%[1]d] : m.json.sequences[0].canvases[%[1]d];
  const id = canvas.id || canvas["@id"];
  if (!win || win.canvasId !== id) return null;
  const pages = st.annotations[id] || {};
  const refs = (canvas.annotations || []).map(p => p.id).concat((canvas.otherContent || []).map(p => p["@id"]));
  if (refs.some(r => !pages[r] || pages[r].isFetching)) return null;
  const failed = refs.filter(r => pages[r].error).map(r => r + ": " + pages[r].error);
  if (failed.length) return {canvas: id, error: "annotation pages not read: " + failed.join("; ")};
  const motivations = st.config.annotations.filteredMotivations;
  let expected = 0;
  for (const r of refs) {
    const j = pages[r].json;
    for (const a of (j.items || j.resources || [])) {
      if ([].concat(a.motivation).some(x => motivations.includes(x))) expected++;
    }
  }
  const items = [...document.querySelectorAll("li[annotationid]")];
  if (items.length !== expected) return null;
  return {canvas: id, texts: items.map(e => e.innerText.trim())};
})()`
