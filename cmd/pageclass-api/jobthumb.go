package main

import (
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/service"
)

// jobThumbOpenAPI describes GET /jobs/{id}/results/{item}/thumbnail
// (added to the OpenAPI document on a service with jobs).
//
//go:embed jobthumb.openapi.json
var jobThumbOpenAPI []byte

// thumbDecodePixels is the most pixels a job's page image is decoded to
// for its thumbnail (1024×1024): a larger one is shrunk while it is decoded,
// a JPEG by its decoder (imageio.Options.MinSide).
const thumbDecodePixels = 1 << 20

// thumbName is the name a job's thumbnail is kept under
// (jobs.Queue.KeepDerived): its width in it, so that a release that makes
// them at another width does not serve the ones kept before.
var thumbName = fmt.Sprintf("thumbnail-%d.jpg", thumbWidth)

// jobThumbnail serves GET /jobs/{id}/results/{item}/thumbnail: a JPEG
// thumbnail, thumbWidth pixels wide, of a job's page image, made from the
// file the job keeps (until JOBS_RETENTION removes the job), so that the
// browser interface shows it for a job opened again. It decodes the image
// as /predict_image does, within the same limits (the pixel cap and the
// process-wide budget of decoded pixels), shrunk while decoding. A PDF or
// a multi-page TIFF answers 409 (its answer holds its pages' thumbnails
// when the job asked for them), a file that is no image 422. A book's
// page, of which the job keeps no copy, is fetched again from its URL
// (jobs.Queue.Input: the service's bounds and BOOK_HOSTS; 502 when it
// cannot be), so that a book job sent without thumbnails has previews too.
// The thumbnail made is kept with the job (jobs.Queue.KeepDerived): the
// next request, from any browser, takes it without decoding or fetching.
func (s *server) jobThumbnail(w http.ResponseWriter, r *http.Request) {
	jpg, kept := s.jobs.Derived(r, thumbName)
	if !kept {
		f, name, ok := s.jobs.Input(w, r)
		if !ok {
			return
		}
		data, err := io.ReadAll(f) // as large as the upload limit let it be
		f.Close()
		if err != nil {
			service.WriteError(w, http.StatusInternalServerError, service.ReasonInternal, fmt.Sprintf("%q: the job's copy cannot be read: %v", name, err))
			return
		}
		var fail *failure
		if jpg, fail = s.thumbOf(r, data, name); fail != nil {
			fail.write(w)
			return
		}
		if err := s.jobs.KeepDerived(r, thumbName, jpg); err != nil {
			s.svc.Logger.WarnContext(r.Context(), "a job's thumbnail is not kept; it is made again at the next request", "job", r.PathValue("id"), "item", r.PathValue("item"), "error", err)
		}
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Content-Length", strconv.Itoa(len(jpg)))
	// The job's file does not change: the browser may keep the thumbnail.
	w.Header().Set("Cache-Control", "private, max-age=86400")
	_, _ = w.Write(jpg)
}

// thumbOf is the thumbnail of the page image data (name: the item's name).
func (s *server) thumbOf(r *http.Request, data []byte, name string) ([]byte, *failure) {
	document := failf(http.StatusConflict, service.ReasonUnsupportedFormat,
		"%q is a document of pages, not a page image: its answer holds its pages' thumbnails (the form field thumbnails=true)", name)
	if imageio.IsPDF(data) {
		return nil, document
	}
	opts := s.decode
	opts.MaxDecodePixels, opts.MinSide = thumbDecodePixels, thumbWidth
	doc, err := opts.Decode(data, name)
	if err != nil {
		return nil, decodeFailure(err, "%q cannot be decoded: %v", name, err)
	}
	if doc.Pages() > 1 {
		return nil, document
	}
	var jpg []byte
	err = doc.Use(r.Context(), 0, func(img imageio.Image) error {
		jpg = thumbJPEG(img, thumbWidth)
		return nil
	})
	switch {
	case r.Context().Err() != nil:
		return nil, gone
	case err != nil:
		return nil, decodeFailure(err, "%q cannot be decoded: %v", name, err)
	case jpg == nil:
		return nil, failf(http.StatusUnprocessableEntity, service.ReasonUndecodable, "%q: the image is empty", name)
	}
	return jpg, nil
}
