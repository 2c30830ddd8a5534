package book

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"archivekit/internal/fetch"
)

// replay is a loopback IIIF Image server that answers only the requests
// the compliance level of each image allows, and logs every request.
type replay struct {
	mu     sync.Mutex
	log    []string // "level size" of each image request
	denied []string
}

const pageW, pageH = 2480, 3508 // an A4 page at 300 dpi

// level0Sizes are the sizes a level 0 service lists.
var level0Sizes = []Size{{155, 219}, {310, 439}, {620, 877}, {1240, 1754}}

var (
	imageRequest = regexp.MustCompile(`^/iiif/v([23])/level([012])/page/full/([^/]+)/0/default\.jpg$`)
	infoRequest  = regexp.MustCompile(`^/iiif/v([23])/level([012])/page/info\.json$`)
)

// allowed says whether a size parameter is one the level guarantees.
func allowed(version, level int, size string) (w, h int, ok bool) {
	full := map[int]string{2: "full", 3: "max"}[version]
	if size == full {
		return pageW, pageH, true
	}
	if level == 0 {
		for _, z := range level0Sizes {
			if (version == 3 && size == fmt.Sprintf("%d,%d", z.Width, z.Height)) || (version == 2 && size == fmt.Sprintf("%d,", z.Width)) {
				return z.Width, z.Height, true
			}
		}
		return 0, 0, false
	}
	if n, err := strconv.Atoi(strings.TrimSuffix(size, ",")); err == nil && strings.HasSuffix(size, ",") {
		return n, n * pageH / pageW, true // w,
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(size, ",")); err == nil && strings.HasPrefix(size, ",") {
		return n * pageW / pageH, n, true // ,h
	}
	if level == 2 && strings.HasPrefix(size, "!") {
		a, b, _ := strings.Cut(size[1:], ",")
		bw, err1 := strconv.Atoi(a)
		bh, err2 := strconv.Atoi(b)
		if err1 == nil && err2 == nil {
			scale := min(float64(bw)/pageW, float64(bh)/pageH)
			return int(pageW * scale), int(pageH * scale), true
		}
	}
	return 0, 0, false
}

func (s *replay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "manifest.json") {
		s.manifest(w, r)
		return
	}
	if m := infoRequest.FindStringSubmatch(r.URL.Path); m != nil {
		version, _ := strconv.Atoi(m[1])
		level, _ := strconv.Atoi(m[2])
		s.mu.Lock()
		s.log = append(s.log, fmt.Sprintf("v%d level%d info", version, level))
		s.mu.Unlock()
		json.NewEncoder(w).Encode(service(version, level, "http://"+r.Host+strings.TrimSuffix(r.URL.Path, "/info.json"), false))
		return
	}
	m := imageRequest.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	version, _ := strconv.Atoi(m[1])
	level, _ := strconv.Atoi(m[2])
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf("v%d level%d %s", version, level, m[3]))
	s.mu.Unlock()
	width, height, ok := allowed(version, level, m[3])
	if !ok {
		s.mu.Lock()
		s.denied = append(s.denied, r.URL.Path)
		s.mu.Unlock()
		http.Error(w, "size not supported at this level", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Write(typicalPage(width, height))
}

// service is the description of the image service at id (version, level):
// its image information, or, sparse, what many manifests say of it (its
// id and version, no level, size or sizes).
func service(version, level int, id string, sparse bool) map[string]any {
	var sizes []any
	if level == 0 {
		for _, z := range level0Sizes {
			sizes = append(sizes, map[string]any{"width": z.Width, "height": z.Height})
		}
	}
	if version == 3 {
		if sparse {
			return map[string]any{"id": id, "type": "ImageService3"}
		}
		return map[string]any{"@context": "http://iiif.io/api/image/3/context.json", "id": id, "type": "ImageService3", "protocol": "http://iiif.io/api/image",
			"profile": fmt.Sprintf("level%d", level), "width": pageW, "height": pageH, "sizes": sizes}
	}
	if sparse {
		return map[string]any{"@context": "http://iiif.io/api/image/2/context.json", "@id": id}
	}
	return map[string]any{"@context": "http://iiif.io/api/image/2/context.json", "@id": id, "protocol": "http://iiif.io/api/image",
		"profile": []any{fmt.Sprintf("http://iiif.io/api/image/2/level%d.json", level)}, "width": pageW, "height": pageH, "sizes": sizes}
}

// manifest serves a manifest (v2 or v3) of three pages, whose image
// services are at levels 0, 1 and 2. A manifest under /v3sparse/ or
// /v2sparse/ says only each service's id and version; one under /v3wrong/
// says each is at level 2.
func (s *replay) manifest(w http.ResponseWriter, r *http.Request) {
	base := "http://" + r.Host
	v3 := strings.HasPrefix(r.URL.Path, "/v3")
	sparse, wrong := strings.Contains(r.URL.Path, "sparse"), strings.Contains(r.URL.Path, "wrong")
	var canvases []any
	for level := 0; level <= 2; level++ {
		version := map[bool]int{true: 3, false: 2}[v3]
		id := fmt.Sprintf("%s/iiif/v%d/level%d/page", base, version, level)
		svc := service(version, level, id, sparse)
		if wrong {
			svc = service(version, 2, id, false)
		}
		canvasID := fmt.Sprintf("%s/canvas/%d", base, level)
		if v3 {
			canvases = append(canvases, map[string]any{"id": canvasID, "type": "Canvas", "label": map[string]any{"none": []string{strconv.Itoa(level + 1)}},
				"width": pageW, "height": pageH, "items": []any{map[string]any{"type": "AnnotationPage", "items": []any{map[string]any{
					"type": "Annotation", "motivation": "painting", "target": canvasID,
					"body": map[string]any{"id": id + "/full/max/0/default.jpg", "type": "Image", "format": "image/jpeg", "service": []any{svc}}}}}}})
			continue
		}
		canvases = append(canvases, map[string]any{"@id": canvasID, "@type": "sc:Canvas", "label": strconv.Itoa(level + 1), "width": pageW, "height": pageH,
			"images": []any{map[string]any{"@type": "oa:Annotation", "motivation": "sc:painting", "on": canvasID,
				"resource": map[string]any{"@id": id + "/full/full/0/default.jpg", "@type": "dctypes:Image", "service": svc}}}})
	}
	var doc map[string]any
	if v3 {
		doc = map[string]any{"@context": "http://iiif.io/api/presentation/3/context.json", "id": base + r.URL.Path, "type": "Manifest", "items": canvases}
	} else {
		doc = map[string]any{"@context": "http://iiif.io/api/presentation/2/context.json", "@id": base + r.URL.Path, "@type": "sc:Manifest",
			"sequences": []any{map[string]any{"@type": "sc:Sequence", "canvases": canvases}}}
	}
	json.NewEncoder(w).Encode(doc)
}

// typicalPage draws a printed page at a size: paper with two columns of
// lines of dark words, some noise, encoded as JPEG at quality 85.
func typicalPage(w, h int) []byte {
	img := image.NewGray(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewSource(1))
	for i := range img.Pix {
		img.Pix[i] = uint8(226 + rng.Intn(12))
	}
	sx, sy := float64(w)/pageW, float64(h)/pageH
	for col := 0; col < 2; col++ {
		x0 := 250 + col*1050
		for y := 300; y < pageH-300; y += 60 {
			x := x0
			for x < x0+950 {
				ww := 40 + rng.Intn(160)
				for yy := int(float64(y) * sy); yy < int(float64(y+32)*sy); yy++ {
					for xx := int(float64(x) * sx); xx < int(float64(min(x+ww, x0+950))*sx); xx++ {
						img.SetGray(xx, yy, color.Gray{Y: uint8(30 + rng.Intn(40))})
					}
				}
				x += ww + 25
			}
		}
	}
	var buf bytes.Buffer
	jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85})
	return buf.Bytes()
}

// TestDerivativeReplay reads a manifest from a loopback server whose pages
// have image services at levels 0, 1 and 2, fetches each page's
// derivative for a 384-pixel model, and checks that the server's log
// holds only requests the level allows, and what each page cost.
func TestDerivativeReplay(t *testing.T) {
	const model = 384
	for _, v := range []struct {
		version string
		want    []string
	}{
		{"v3", []string{"v3 level0 310,439", "v3 level1 ,384", "v3 level2 !384,384"}},
		{"v2", []string{"v2 level0 310,", "v2 level1 ,384", "v2 level2 !384,384"}},
	} {
		t.Run(v.version, func(t *testing.T) {
			srv := &replay{}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			f := fetch.New(fetch.Policy{Retries: -1}, nil)
			b, err := Read(context.Background(), ts.URL+"/"+v.version+"/manifest.json", Options{Fetcher: f})
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Pages) != 3 {
				t.Fatalf("%d pages", len(b.Pages))
			}
			for i, p := range b.Pages {
				svc := p.Image.Service
				if svc == nil || svc.Level != i {
					t.Fatalf("page %d: service %+v", i, svc)
				}
				_, before := f.Fetched()
				data, err := f.Get(context.Background(), svc.Derivative(model))
				if err != nil {
					t.Fatalf("page %d (level %d): %v", i, i, err)
				}
				_, after := f.Fetched()
				cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				if max(cfg.Width, cfg.Height) < model {
					t.Errorf("level %d: %dx%d, smaller than the model's %d", i, cfg.Width, cfg.Height, model)
				}
				t.Logf("level %d: %s -> %dx%d, %d bytes", i, svc.Derivative(model), cfg.Width, cfg.Height, after-before)
				if i > 0 && after-before > 60_000 {
					t.Errorf("level %d: %d bytes for a %d-pixel page, target 60 KB", i, after-before, model)
				}
			}
			if strings.Join(srv.log, "\n") != strings.Join(v.want, "\n") || len(srv.denied) > 0 {
				t.Errorf("request log:\n%s\nwant:\n%s\ndenied: %v", strings.Join(srv.log, "\n"), strings.Join(v.want, "\n"), srv.denied)
			}
			// for comparison: the full image a client without the policy fetches
			_, before := f.Fetched()
			if _, err := f.Get(context.Background(), b.Pages[2].Image.Location); err != nil {
				t.Fatal(err)
			}
			_, after := f.Fetched()
			t.Logf("full image (%dx%d): %d bytes", pageW, pageH, after-before)
		})
	}
}

// TestFetchDerivativeInfo: where a manifest says too little of its image
// services (only their ids), or misstates their level (each says level 2),
// FetchDerivative reads each service's info.json and asks only what the
// server's level allows (it asked a level 0 server for the full image, or
// for a size the server refused, and the page failed).
func TestFetchDerivativeInfo(t *testing.T) {
	const model = 384
	for _, v := range []struct {
		manifest string
		want     []string
	}{
		{"v3sparse", []string{"v3 level0 info", "v3 level0 310,439", "v3 level1 info", "v3 level1 ,384", "v3 level2 info", "v3 level2 !384,384"}},
		{"v2sparse", []string{"v2 level0 info", "v2 level0 310,", "v2 level1 info", "v2 level1 ,384", "v2 level2 info", "v2 level2 !384,384"}},
		// Asked as level 2 first; refused, then asked within the level
		// its info.json gives.
		{"v3wrong", []string{"v3 level0 !384,384", "v3 level0 info", "v3 level0 310,439", "v3 level1 !384,384", "v3 level1 info", "v3 level1 ,384", "v3 level2 !384,384"}},
		// A manifest that says enough: no info.json is read.
		{"v3", []string{"v3 level0 310,439", "v3 level1 ,384", "v3 level2 !384,384"}},
	} {
		// FetchDerivative with the manifest's service, and FetchPlanned with
		// the request planned from it (a book job's item) ask the same.
		for _, planned := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s planned %v", v.manifest, planned), func(t *testing.T) {
				srv := &replay{}
				ts := httptest.NewServer(srv)
				defer ts.Close()
				f := fetch.New(fetch.Policy{Retries: -1}, nil)
				b, err := Read(context.Background(), ts.URL+"/"+v.manifest+"/manifest.json", Options{Fetcher: f})
				if err != nil {
					t.Fatal(err)
				}
				for i, p := range b.Pages {
					fetchPage := FetchDerivative
					if planned {
						fetchPage = func(ctx context.Context, f *fetch.Fetcher, linked bool, s *ImageService, size int) ([]byte, string, error) {
							return FetchPlanned(ctx, f, linked, s.Derivative(size), size)
						}
					}
					data, from, err := fetchPage(context.Background(), f, false, p.Image.Service, model)
					if err != nil {
						t.Fatalf("page %d: %v", i, err)
					}
					cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
					if err != nil || max(cfg.Width, cfg.Height) < model {
						t.Errorf("page %d: %s gave %dx%d (%v), want at least %d on the long side", i, from, cfg.Width, cfg.Height, err, model)
					}
				}
				if strings.Join(srv.log, "\n") != strings.Join(v.want, "\n") {
					t.Errorf("request log:\n%s\nwant:\n%s", strings.Join(srv.log, "\n"), strings.Join(v.want, "\n"))
				}
			})
		}
	}
}

// TestSizeOf: the size a planned request asks for, which a refused one is
// asked again at (a job's smaller model was fetched at the ensemble's
// size).
func TestSizeOf(t *testing.T) {
	for param, want := range map[string]int{"!384,384": 384, "224,": 224, ",300": 300, "310,439": 439, "^!500,500": 500, "max": 0, "full": 0, "pct:50": 0} {
		if got := sizeOf(param); got != want {
			t.Errorf("sizeOf(%q) = %d, want %d", param, got, want)
		}
	}
}

func TestImageRequest(t *testing.T) {
	for _, c := range []struct {
		url, id, size string
		version       int
		ok            bool
	}{
		{"https://x.org/iiif/p1/full/max/0/default.jpg", "https://x.org/iiif/p1", "max", 3, true},
		{"https://x.org/iiif/p1/full/!384,384/0/default.jpg", "https://x.org/iiif/p1", "!384,384", 2, true},
		{"http://x.org/i/full/384,/0/native.jpg", "http://x.org/i", "384,", 1, true},
		{"https://x.org/iiif/p1/0,0,10,10/max/0/default.jpg", "", "", 0, false}, // a region: no whole image
		{"https://x.org/scans/0001.jpg", "", "", 0, false},
	} {
		s, size, ok := ImageRequest(c.url)
		if ok != c.ok || ok && (s.ID != c.id || s.Version != c.version || s.Level != -1 || size != c.size) {
			t.Errorf("%s: %+v %q %v", c.url, s, size, ok)
		}
	}
}

// TestReplayRefuses checks the replay server's rule itself: what a level
// does not guarantee is refused.
func TestReplayRefuses(t *testing.T) {
	for _, c := range []struct {
		version, level int
		size           string
		ok             bool
	}{
		{3, 0, ",384", false}, {3, 0, "384,", false}, {3, 0, "!384,384", false}, {3, 0, "310,439", true}, {2, 0, "310,439", false}, {2, 0, "310,", true},
		{3, 1, "!384,384", false}, {3, 1, ",384", true}, {3, 1, "384,", true}, {3, 1, "max", true}, {2, 1, "max", false},
		{3, 2, "!384,384", true}, {2, 2, "full", true},
	} {
		if _, _, ok := allowed(c.version, c.level, c.size); ok != c.ok {
			t.Errorf("v%d level %d %s: allowed %v", c.version, c.level, c.size, ok)
		}
	}
}

func TestDerivative(t *testing.T) {
	sizes := []Size{{100, 150}, {1000, 1500}, {500, 750}}
	for _, c := range []struct {
		s    ImageService
		want string
	}{
		{ImageService{ID: "https://x/i", Version: 2, Level: 2, Width: 2000, Height: 3000}, "https://x/i/full/!384,384/0/default.jpg"},
		{ImageService{ID: "https://x/i/", Version: 3, Level: 2}, "https://x/i/full/!384,384/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 3, Level: 1, Width: 3000, Height: 2000}, "https://x/i/full/384,/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 3, Level: 1, Width: 2000, Height: 3000}, "https://x/i/full/,384/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 2, Level: 1}, "https://x/i/full/384,/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 3, Level: 1, Width: 300, Height: 200}, "https://x/i/full/max/0/default.jpg"}, // never upscaled
		{ImageService{ID: "https://x/i", Version: 2, Level: 2, Width: 300, Height: 200}, "https://x/i/full/full/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 3, Level: 0, Sizes: sizes}, "https://x/i/full/500,750/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 2, Level: 0, Sizes: sizes}, "https://x/i/full/500,/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 3, Level: 0, Sizes: sizes[:1]}, "https://x/i/full/max/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 2, Level: -1}, "https://x/i/full/full/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 1, Level: 1, Width: 600, Height: 400}, "https://x/i/full/384,/0/native.jpg"},
		// Within the server's limits (a 384 box was refused by a server
		// allowing 300 pixels wide).
		{ImageService{ID: "https://x/i", Version: 3, Level: 2, MaxWidth: 300}, "https://x/i/full/!300,300/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 3, Level: 2, Width: 2000, Height: 3000, MaxWidth: 1000, MaxHeight: 200}, "https://x/i/full/!200,200/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 2, Level: 1, Width: 3000, Height: 2000, MaxArea: 90_000}, "https://x/i/full/300,/0/default.jpg"},
		{ImageService{ID: "https://x/i", Version: 3, Level: 1, Width: 300, Height: 200, MaxWidth: 250}, "https://x/i/full/250,/0/default.jpg"},
	} {
		if got := c.s.Derivative(384); got != c.want {
			t.Errorf("%+v: %s, want %s", c.s, got, c.want)
		}
	}
	for p, want := range map[string]int{
		"level0": 0, "level2": 2, "http://iiif.io/api/image/2/level1.json": 1,
		"http://library.stanford.edu/iiif/image-api/1.1/compliance.html#level2": 2, "http://iiif.io/api/image/2/context.json": -1,
	} {
		if got := levelOf(p); got != want {
			t.Errorf("levelOf(%s) = %d, want %d", p, got, want)
		}
	}
}
