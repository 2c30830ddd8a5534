package book

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"
)

// ImageService is a IIIF Image API service, as a manifest declares it.
type ImageService struct {
	ID      string // the base URI, without a trailing slash
	Version int    // Image API major version: 1, 2 or 3 (2 when unsaid)
	// Level is the declared compliance level, 0, 1 or 2; -1 when the
	// manifest does not declare one (treated as level 0).
	Level         int
	Width, Height int    // full size, 0 when not given
	Sizes         []Size // the sizes entries, if any
	// MaxWidth, MaxHeight and MaxArea are the server's limits on the
	// images it returns (0: none given; MaxHeight defaults to MaxWidth).
	MaxWidth, MaxHeight, MaxArea int
	// declared: the service says its Image API version (type or context).
	declared bool
}

// Size is an entry of a service's sizes.
type Size struct{ Width, Height int }

// Derivative returns the URL of an image whose long side is at least
// size pixels (when the image is that large) that the service's declared
// compliance level guarantees, so that no more than the model needs is
// fetched:
//
//   - level 2: !size,size (best fit in a size×size box);
//   - level 1: size, or ,size on the long side (size, when the shape is
//     not known);
//   - level 0 (or undeclared): the smallest sizes entry whose long side is
//     at least size, else the full image (full, or max in Image API 3).
//
// At levels 1 and 2, an image known to be no larger than size is asked
// for in full, never upscaled, and a size over the server's limits
// (maxWidth, maxHeight, maxArea) is brought within them.
func (s *ImageService) Derivative(size int) string {
	size = s.capped(size)
	full := "full"
	if s.Version >= 3 {
		full = "max"
	}
	quality := "default"
	if s.Version == 1 {
		quality = "native"
	}
	req := func(sz string) string {
		return fmt.Sprintf("%s/full/%s/0/%s.jpg", strings.TrimRight(s.ID, "/"), sz, quality)
	}
	long := max(s.Width, s.Height)
	switch {
	case s.Level >= 1 && long > 0 && long <= size:
		return req(full)
	case s.Level >= 2:
		return req(fmt.Sprintf("!%d,%d", size, size))
	case s.Level == 1:
		if s.Height > s.Width {
			return req(fmt.Sprintf(",%d", size))
		}
		return req(fmt.Sprintf("%d,", size))
	}
	sizes := append([]Size(nil), s.Sizes...)
	sort.SliceStable(sizes, func(i, j int) bool {
		return max(sizes[i].Width, sizes[i].Height) < max(sizes[j].Width, sizes[j].Height)
	})
	for _, z := range sizes {
		if max(z.Width, z.Height) >= size && z.Width > 0 && z.Height > 0 {
			if s.Version >= 3 {
				return req(fmt.Sprintf("%d,%d", z.Width, z.Height))
			}
			return req(fmt.Sprintf("%d,", z.Width))
		}
	}
	return req(full)
}

// capped is size brought within the server's limits for an image whose
// long side is size and whose shape may be unknown.
func (s *ImageService) capped(size int) int {
	maxH := cmp.Or(s.MaxHeight, s.MaxWidth)
	for _, limit := range []int{s.MaxWidth, maxH, int(math.Sqrt(float64(s.MaxArea)))} {
		if limit > 0 {
			size = min(size, limit)
		}
	}
	return size
}

// imageService reads a service object (v2 or v3) or the first image
// service of a list; nil when there is none.
func imageService(v any) *ImageService {
	for _, o := range objects(v) {
		typ := str(o, "@type", "type")
		ctx := strings.Join(strs(o["@context"]), " ")
		profiles := strs(o["profile"])
		isImage := strings.HasPrefix(typ, "ImageService") || strings.Contains(ctx, "/image/") ||
			strings.Contains(strings.Join(profiles, " "), "/image/") || strings.Contains(strings.Join(profiles, " "), "image-api") ||
			str(o, "protocol") == "http://iiif.io/api/image"
		if !isImage {
			if typ == "" && len(profiles) > 0 && strings.HasPrefix(profiles[0], "level") {
				isImage = true
			}
		}
		if !isImage {
			continue
		}
		s := &ImageService{ID: strings.TrimRight(str(o, "@id", "id"), "/"), Version: 2, Level: -1}
		switch {
		case typ == "ImageService3" || strings.Contains(ctx, "/image/3"):
			s.Version, s.declared = 3, true
		case typ == "ImageService1" || strings.Contains(ctx, "/image/1") || strings.Contains(ctx, "image-api/1"):
			s.Version, s.declared = 1, true
		case typ == "ImageService2" || strings.Contains(ctx, "/image/2"):
			s.declared = true
		}
		for _, p := range profiles {
			if l := levelOf(p); l >= 0 {
				s.Level = l
				break
			}
		}
		s.Width, s.Height = num(o["width"]), num(o["height"])
		for _, z := range objects(o["sizes"]) {
			s.Sizes = append(s.Sizes, Size{num(z["width"]), num(z["height"])})
		}
		s.MaxWidth, s.MaxHeight, s.MaxArea = limits(o)
		if s.ID == "" {
			continue
		}
		return s
	}
	return nil
}

// limits reads a service's maxWidth, maxHeight and maxArea: its own (Image
// API 3), else its profile's description object's (2.1); 0 where it gives
// none, or a value that is no positive number.
func limits(o map[string]any) (width, height, area int) {
	pos := func(v any) int { return max(num(v), 0) }
	for _, d := range append([]map[string]any{o}, objects(o["profile"])...) {
		width, height, area = cmp.Or(width, pos(d["maxWidth"])), cmp.Or(height, pos(d["maxHeight"])), cmp.Or(area, pos(d["maxArea"]))
	}
	return width, height, area
}

// levelOf reads a compliance level from a profile: level0 (v3),
// http://iiif.io/api/image/2/level1.json (v2),
// ...compliance.html#level2 (v1); -1 when it names none.
func levelOf(p string) int {
	i := strings.LastIndex(p, "level")
	if i < 0 || i+5 >= len(p) {
		return -1
	}
	switch p[i+5] {
	case '0':
		return 0
	case '1':
		return 1
	case '2':
		return 2
	}
	return -1
}
