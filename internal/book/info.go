package book

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"archivekit/internal/fetch"
)

// A manifest often says less of an image service than its server does:
// no compliance level, no sizes, no image size, or a level or limit the
// server does not keep. Its image information (info.json) says what the
// server answers: FetchDerivative reads it when the manifest says too
// little to ask within it (NeedsInfo), or when the server refuses the
// request the manifest's word gave.

// InfoURL is the address of the service's image information document.
func (s *ImageService) InfoURL() string {
	return strings.TrimRight(s.ID, "/") + "/info.json"
}

// NeedsInfo says whether the manifest's word on the service is too thin
// to ask for a derivative the server is sure to give: no compliance level;
// level 0 without sizes (the full image would be fetched, which a static
// server may not even have); or, in Image API 3, which refuses to scale
// up, no image size at level 1 or 2.
func (s *ImageService) NeedsInfo() bool {
	switch {
	case s.Level < 0, s.Level == 0 && len(s.Sizes) == 0:
		return true
	case s.Version >= 3 && (s.Width <= 0 || s.Height <= 0):
		return true
	}
	return false
}

// ParseInfo reads an image information document (info.json, Image API 1,
// 2 or 3) as the service it describes.
func ParseInfo(data []byte) (*ImageService, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not an image information document: %v", err)
	}
	if str(doc, "@id", "id") == "" {
		doc["@id"] = "info" // documents without their id still describe the service
	}
	if _, ok := doc["protocol"]; !ok && doc["@context"] == nil && doc["type"] == nil {
		doc["protocol"] = "http://iiif.io/api/image"
	}
	s := imageService(doc)
	if s == nil {
		return nil, errors.New("not an image information document")
	}
	return s, nil
}

// withInfo is s as its image information info corrects it: the server's
// level, version, image size, sizes and limits where it gives them.
func (s ImageService) withInfo(info *ImageService) *ImageService {
	if info.Level >= 0 {
		s.Level = info.Level
	}
	if info.declared {
		s.Version = info.Version
	}
	if info.Width > 0 && info.Height > 0 {
		s.Width, s.Height = info.Width, info.Height
	}
	if len(info.Sizes) > 0 {
		s.Sizes = info.Sizes
	}
	if info.MaxWidth > 0 || info.MaxHeight > 0 || info.MaxArea > 0 {
		s.MaxWidth, s.MaxHeight, s.MaxArea = info.MaxWidth, info.MaxHeight, info.MaxArea
	}
	return &s
}

// refused says whether err is a server's refusal of the request itself
// (400 Bad Request, 501 Not Implemented), which a request within what its
// image information says may avoid; a 404 says the image is gone.
func refused(err error) bool {
	var se *fetch.StatusError
	return errors.As(err, &se) && (se.Code == http.StatusBadRequest || se.Code == http.StatusNotImplemented)
}

// FetchDerivative fetches the image of service s at size pixels on its
// long side (Derivative) with f (GetLinked when linked: the service is a
// link of a remote book). It reads the service's image information first
// when the manifest says too little (NeedsInfo), and after a request the
// server refused (refused: a level or limit the manifest misstated), then
// asks once more when that changes the request. It returns the image and
// the URL it came from; f's cache keeps neither image.
func FetchDerivative(ctx context.Context, f *fetch.Fetcher, linked bool, s *ImageService, size int) ([]byte, string, error) {
	return fetchWithInfo(ctx, f, linked, s, size, s.Derivative(size), s.NeedsInfo())
}

// FetchPlanned fetches rawURL, a page's image as planned from its book
// before any image server was asked (a book job's item, Derivative at
// size): when it is a IIIF Image request (ImageRequest) for the full image,
// which a manifest saying too little of its service gives, the service's
// image information is read first and the image asked within it at size;
// one the server refuses is asked again so, at the size it asked for (the
// plan's, which size only stands in for when it names none), as
// FetchDerivative does. Any other URL is fetched as it is.
func FetchPlanned(ctx context.Context, f *fetch.Fetcher, linked bool, rawURL string, size int) ([]byte, string, error) {
	s, param, ok := ImageRequest(rawURL)
	if n := sizeOf(param); n > 0 {
		size = n
	}
	if !ok {
		data, err := f.Getter(linked)(ctx, rawURL)
		f.Drop(rawURL)
		return data, rawURL, err
	}
	return fetchWithInfo(ctx, f, linked, s, size, rawURL, param == "full" || param == "max")
}

// wholeImageRequest is a IIIF Image API request for a whole image, unrotated
// (what Derivative writes): the service's base URI, size and quality.
var wholeImageRequest = regexp.MustCompile(`^(https?://.+)/full/([^/]+)/0/(default|native|color|gray|bitonal)\.(?:jpg|jpeg|png|webp|tif|gif)$`)

// ImageRequest reads rawURL as a IIIF Image API request for a whole image:
// the service it asks (its base URI; the version its size or quality
// says, "max" 3, "native" 1, else 2; no level known) and its size
// parameter; false when it is none.
func ImageRequest(rawURL string) (s *ImageService, size string, ok bool) {
	m := wholeImageRequest.FindStringSubmatch(rawURL)
	if m == nil {
		return nil, "", false
	}
	s = &ImageService{ID: m[1], Version: 2, Level: -1}
	switch {
	case m[2] == "max":
		s.Version = 3
	case m[3] == "native":
		s.Version = 1
	}
	return s, m[2], true
}

// sizeOf is the long side a IIIF size parameter asks for ("!384,384",
// "384,", ",384", "310,439"); 0 for one that names none ("max", "full",
// "pct:50").
func sizeOf(param string) int {
	w, h, ok := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(param, "^"), "!"), ",")
	if !ok {
		return 0
	}
	a, _ := strconv.Atoi(w)
	b, _ := strconv.Atoi(h)
	return max(a, b, 0)
}

// fetchWithInfo fetches first, the request planned for service s at size,
// reading the service's image information before it (readFirst) or after
// the server refused it, and asking what that gives when it differs.
func fetchWithInfo(ctx context.Context, f *fetch.Fetcher, linked bool, s *ImageService, size int, first string, readFirst bool) ([]byte, string, error) {
	get := f.Getter(linked)
	target, read := first, false
	info := func() bool {
		read = true
		b, err := get(ctx, s.InfoURL())
		f.Drop(s.InfoURL())
		if err != nil {
			return false
		}
		i, err := ParseInfo(b)
		if err != nil {
			return false
		}
		target = s.withInfo(i).Derivative(size)
		return true
	}
	if readFirst {
		info() // without it, the request as planned
	}
	data, err := get(ctx, target)
	f.Drop(target)
	if err != nil && !read && refused(err) {
		if info() && target != first {
			data, err = get(ctx, target)
			f.Drop(target)
		}
	}
	return data, target, err
}
