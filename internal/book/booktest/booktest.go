// Package booktest serves books for tests: a loopback stand-in of a IIIF
// Image and Presentation server over page images given by the test.
package booktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/image/draw"
)

// Server is a loopback stand-in of a IIIF Image and Presentation
// server: it serves a manifest of pages made at test time from the shared
// sample pages (read in place, never copied), page i's image service at
// compliance level i mod 3, and answers only the image requests that its
// level guarantees (IIIF Image API 2.1 and 3.0, sections 4.2 and 6): level
// 0 its listed sizes and full (max), level 1 w, and ,h too, level 2 !w,h
// too. Each service's info.json says the same (a viewer's image client
// reads it), and every answer allows any origin (CORS), as a public IIIF
// server's do. Every request is logged.
type Server struct {
	*httptest.Server
	// V3 says the manifest is Presentation 3.0 (else 2.1); Images are the
	// image file of each page and Levels its service's compliance level.
	V3     bool
	Images []string
	Levels []int
	// Sparse: the manifest says only each service's id and version, as
	// many do; its info.json says the rest (level, size, sizes).
	Sparse bool

	mu      sync.Mutex
	decoded map[string]image.Image
	log     []string       // every request path
	denied  []string       // image requests the level does not allow
	counts  map[string]int // requests per path
	sizes   map[int]string // the size asked for, per page
	bytes   map[int]int    // bytes sent per page
	gone    map[int]bool   // pages whose image requests are answered 404
	noImage map[int]bool   // pages whose canvas has no image
	hold    func() (done func())
	texts   map[int]textFile
}

// textFile is a page's text file, linked from its canvas's seeAlso.
type textFile struct {
	body            []byte
	format, profile string
}

// SetText links a text file (ALTO, PAGE-XML, hOCR) from page i's canvas
// (seeAlso, with format and profile), served at TextURL(i).
func (s *Server) SetText(i int, body []byte, format, profile string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.texts == nil {
		s.texts = map[int]textFile{}
	}
	s.texts[i] = textFile{body, format, profile}
}

// TextURL is the address of page i's text file (SetText).
func (s *Server) TextURL(i int) string { return fmt.Sprintf("%s/iiif/text/%d", s.URL, i) }

// New serves a book of n pages cycling over images (PNG or JPEG files, read
// in place).
func New(t testing.TB, images []string, n int, v3 bool) *Server {
	t.Helper()
	s := &Server{V3: v3, decoded: map[string]image.Image{}, counts: map[string]int{}, sizes: map[int]string{}, bytes: map[int]int{}}
	for i := 0; i < n; i++ {
		s.Images = append(s.Images, images[i%len(images)])
		s.Levels = append(s.Levels, i%3)
	}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// SetHold makes every IIIF image request call hold before it is answered,
// and the function hold returns once it is (a test counts the requests in
// flight, or holds them there); nil removes it.
func (s *Server) SetHold(hold func() (done func())) {
	s.mu.Lock()
	s.hold = hold
	s.mu.Unlock()
}

// ManifestURL is the URL of the book's manifest.
func (s *Server) ManifestURL() string { return s.URL + "/iiif/book/manifest.json" }

// Requests returns the count of requests of every path.
func (s *Server) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// Served is a copy of what the server logged: every request path, the
// image requests refused, the size each page was asked for and the bytes
// sent per page.
func (s *Server) Served() (log, denied []string, sizes map[int]string, bytes map[int]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sizes, bytes = map[int]string{}, map[int]int{}
	for k, v := range s.sizes {
		sizes[k] = v
	}
	for k, v := range s.bytes {
		bytes[k] = v
	}
	return append([]string(nil), s.log...), append([]string(nil), s.denied...), sizes, bytes
}

// Reset forgets the requests logged so far.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log, s.denied, s.counts, s.sizes, s.bytes = nil, nil, map[string]int{}, map[int]string{}, map[int]int{}
}

// Gone makes the image of book page i (from 0) answer 404 Not Found
// from now on.
func (s *Server) Gone(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone == nil {
		s.gone = map[int]bool{}
	}
	s.gone[i] = true
}

// NoImage makes book page i's canvas (from 0) have no image from now on:
// its annotation page (3.0) or its images (2.1) empty.
func (s *Server) NoImage(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noImage == nil {
		s.noImage = map[int]bool{}
	}
	s.noImage[i] = true
}

// Image decodes (once) the sample page of book page i.
func (s *Server) Image(i int) (image.Image, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.Images[i]
	if img, ok := s.decoded[p]; ok {
		return img, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, err
	}
	s.decoded[p] = img
	return img, nil
}

// Level0Sizes are the sizes a level 0 service lists for an image: an
// eighth, a quarter, a half.
func Level0Sizes(w, h int) [][2]int {
	return [][2]int{{w / 8, h / 8}, {w / 4, h / 4}, {w / 2, h / 2}}
}

var (
	imageRequest = regexp.MustCompile(`^/iiif/img/(\d+)/full/([^/]+)/0/default\.jpg$`)
	// plainImage is a page image as a file (of a METS book): the sample
	// page of book page N-1 for the last number N in its name, as it is.
	plainImage = regexp.MustCompile(`^/plain/.*?(\d+)\.\w+$`)
	// textRequest is a page's text file (SetText).
	textRequest = regexp.MustCompile(`^/iiif/text/(\d+)$`)
	// infoRequest is a page's image information (info.json).
	infoRequest = regexp.MustCompile(`^/iiif/img/(\d+)/info\.json$`)
)

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.log = append(s.log, r.URL.Path)
	s.counts[r.URL.Path]++
	s.mu.Unlock()
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if r.URL.Path == "/iiif/book/manifest.json" {
		s.manifest(w)
		return
	}
	if m := infoRequest.FindStringSubmatch(r.URL.Path); m != nil {
		i, _ := strconv.Atoi(m[1])
		s.info(w, r, i)
		return
	}
	if m := textRequest.FindStringSubmatch(r.URL.Path); m != nil {
		i, _ := strconv.Atoi(m[1])
		s.mu.Lock()
		tf, ok := s.texts[i]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", tf.format)
		w.Write(tf.body)
		return
	}
	if m := plainImage.FindStringSubmatch(r.URL.Path); m != nil {
		n, _ := strconv.Atoi(m[1])
		b, err := os.ReadFile(s.Images[(max(n, 1)-1)%len(s.Images)])
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write(b)
		return
	}
	m := imageRequest.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	i, _ := strconv.Atoi(m[1])
	s.mu.Lock()
	gone, hold := s.gone[i], s.hold
	s.mu.Unlock()
	if hold != nil {
		defer hold()()
	}
	if gone {
		http.NotFound(w, r)
		return
	}
	img, ok := s.pageImage(w, r, i)
	if !ok {
		return
	}
	b := img.Bounds()
	width, height, ok := s.allowed(s.Levels[i], m[2], b.Dx(), b.Dy())
	if !ok {
		s.mu.Lock()
		s.denied = append(s.denied, r.URL.Path)
		s.mu.Unlock()
		http.Error(w, "size not supported at this compliance level", http.StatusBadRequest)
		return
	}
	dst := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 85}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.sizes[i] = m[2]
	s.bytes[i] += buf.Len()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "image/jpeg")
	w.Write(buf.Bytes())
}

// allowed is the size of the image answered for a size parameter, if the
// level guarantees it.
func (s *Server) allowed(level int, size string, fw, fh int) (w, h int, ok bool) {
	if size == map[bool]string{true: "max", false: "full"}[s.V3] {
		return fw, fh, true
	}
	if level == 0 {
		for _, z := range Level0Sizes(fw, fh) {
			if size == fmt.Sprintf("%d,%d", z[0], z[1]) && s.V3 || size == fmt.Sprintf("%d,", z[0]) && !s.V3 {
				return z[0], z[1], true
			}
		}
		return 0, 0, false
	}
	if a, ok := strings.CutSuffix(size, ","); ok {
		if n, err := strconv.Atoi(a); err == nil && n > 0 && n <= fw {
			return n, max(1, n*fh/fw), true
		}
	}
	if a, ok := strings.CutPrefix(size, ","); ok {
		if n, err := strconv.Atoi(a); err == nil && n > 0 && n <= fh {
			return max(1, n*fw/fh), n, true
		}
	}
	if a, ok := strings.CutPrefix(size, "!"); ok && level == 2 {
		bw, bh, _ := strings.Cut(a, ",")
		x, err1 := strconv.Atoi(bw)
		y, err2 := strconv.Atoi(bh)
		if err1 == nil && err2 == nil && x > 0 && y > 0 {
			scale := min(float64(x)/float64(fw), float64(y)/float64(fh), 1)
			return max(1, int(float64(fw)*scale)), max(1, int(float64(fh)*scale)), true
		}
	}
	return 0, 0, false
}

// service is the image service of page i, as the manifest embeds it
// (Image API 3.0 or 2.1).
func (s *Server) service(i, fw, fh int) map[string]any {
	id := fmt.Sprintf("%s/iiif/img/%d", s.URL, i)
	var svc map[string]any
	if s.V3 {
		svc = map[string]any{"id": id, "type": "ImageService3", "profile": fmt.Sprintf("level%d", s.Levels[i]), "width": fw, "height": fh}
	} else {
		svc = map[string]any{"@context": "http://iiif.io/api/image/2/context.json", "@id": id,
			"profile": fmt.Sprintf("http://iiif.io/api/image/2/level%d.json", s.Levels[i]), "width": fw, "height": fh}
	}
	if s.Levels[i] == 0 {
		var sizes []any
		for _, z := range Level0Sizes(fw, fh) {
			sizes = append(sizes, map[string]any{"width": z[0], "height": z[1]})
		}
		svc["sizes"] = sizes
	}
	return svc
}

// pageImage is page i's decoded image; when there is none it answers the
// request (404 past the last page, 500 when the file cannot be read).
func (s *Server) pageImage(w http.ResponseWriter, r *http.Request, i int) (image.Image, bool) {
	if i >= len(s.Images) {
		http.NotFound(w, r)
		return nil, false
	}
	img, err := s.Image(i)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil, false
	}
	return img, true
}

// info writes page i's image information (info.json): its service with
// the context and protocol the Image API asks for.
func (s *Server) info(w http.ResponseWriter, r *http.Request, i int) {
	img, ok := s.pageImage(w, r, i)
	if !ok {
		return
	}
	svc := s.service(i, img.Bounds().Dx(), img.Bounds().Dy())
	svc["protocol"] = "http://iiif.io/api/image"
	if s.V3 {
		svc["@context"] = "http://iiif.io/api/image/3/context.json"
	} else {
		svc["profile"] = []any{svc["profile"]}
	}
	w.Header().Set("Content-Type", "application/ld+json")
	json.NewEncoder(w).Encode(svc)
}

// manifest writes the book's manifest (Presentation 3.0 or 2.1).
func (s *Server) manifest(w http.ResponseWriter) {
	var canvases []any
	for i := range s.Images {
		img, err := s.Image(i)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fw, fh := img.Bounds().Dx(), img.Bounds().Dy()
		svcID := fmt.Sprintf("%s/iiif/img/%d", s.URL, i)
		canvasID := fmt.Sprintf("%s/iiif/book/canvas/p%d", s.URL, i+1)
		label := fmt.Sprintf("f. %d", i+1)
		svc := s.service(i, fw, fh)
		if s.Sparse {
			for k := range svc {
				if k != "id" && k != "@id" && k != "type" && k != "@context" {
					delete(svc, k)
				}
			}
		}
		s.mu.Lock()
		tf, text := s.texts[i]
		none := s.noImage[i]
		s.mu.Unlock()
		if s.V3 {
			c := map[string]any{"id": canvasID, "type": "Canvas", "label": map[string]any{"none": []string{label}},
				"width": fw, "height": fh, "items": []any{map[string]any{"id": canvasID + "/page", "type": "AnnotationPage", "items": []any{map[string]any{
					"id": canvasID + "/image", "type": "Annotation", "motivation": "painting", "target": canvasID,
					"body": map[string]any{"id": svcID + "/full/max/0/default.jpg", "type": "Image", "format": "image/jpeg", "width": fw, "height": fh,
						"service": []any{svc}}}}}}}
			if none {
				c["items"] = []any{map[string]any{"id": canvasID + "/page", "type": "AnnotationPage", "items": []any{}}}
			}
			if text {
				c["seeAlso"] = []any{map[string]any{"id": s.TextURL(i), "type": "Dataset", "format": tf.format, "profile": tf.profile}}
			}
			canvases = append(canvases, c)
			continue
		}
		c := map[string]any{"@id": canvasID, "@type": "sc:Canvas", "label": label, "width": fw, "height": fh,
			"images": []any{map[string]any{"@type": "oa:Annotation", "motivation": "sc:painting", "on": canvasID,
				"resource": map[string]any{"@id": svcID + "/full/full/0/default.jpg", "@type": "dctypes:Image", "format": "image/jpeg",
					"width": fw, "height": fh, "service": svc}}}}
		if none {
			c["images"] = []any{}
		}
		if text {
			c["seeAlso"] = map[string]any{"@id": s.TextURL(i), "format": tf.format, "profile": tf.profile}
		}
		canvases = append(canvases, c)
	}
	var doc map[string]any
	if s.V3 {
		doc = map[string]any{"@context": "http://iiif.io/api/presentation/3/context.json", "id": s.ManifestURL(), "type": "Manifest",
			"label": map[string]any{"en": []string{"A test book"}}, "items": canvases}
	} else {
		doc = map[string]any{"@context": "http://iiif.io/api/presentation/2/context.json", "@id": s.ManifestURL(), "@type": "sc:Manifest",
			"label": "A test book", "sequences": []any{map[string]any{"@type": "sc:Sequence", "canvases": canvases}}}
	}
	w.Header().Set("Content-Type", "application/ld+json")
	json.NewEncoder(w).Encode(doc)
}

// Gate holds each request that enters it until n are in it at once (or
// five seconds passed: a server whose requests come one by one is only
// slow), and records the most that were in it at once: a test of fetches
// n at a time sees exactly n.
type Gate struct {
	n    int
	mu   sync.Mutex
	in   int
	most int
	once sync.Once
	full chan struct{}
}

// NewGate is a Gate that opens at n requests in it.
func NewGate(n int) *Gate { return &Gate{n: n, full: make(chan struct{})} }

// Enter holds a request until the gate opens and returns the function
// that takes it out, to call once it is answered (SetHold takes Enter).
func (g *Gate) Enter() (leave func()) {
	g.mu.Lock()
	g.in++
	g.most = max(g.most, g.in)
	if g.in == g.n {
		g.once.Do(func() { close(g.full) }) // once: the count comes back to n after the first leave
	}
	g.mu.Unlock()
	select {
	case <-g.full:
	case <-time.After(5 * time.Second):
	}
	return func() {
		g.mu.Lock()
		g.in--
		g.mu.Unlock()
	}
}

// Most is the most requests that were in the gate at once.
func (g *Gate) Most() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}
