package main

import (
	"errors"
	"io"

	"archivekit/internal/jobs"
	"archivekit/internal/pageclass/imageio"
)

// pick chooses the endpoint of a job's item by its content, as the web
// page (documentKind) and /predict_document go: a PDF (by its %PDF-
// signature, sent labelled application/pdf as /predict_document asks, or
// labelled so) and a TIFF of several pages (counted as /predict_document
// counts them) run as /predict_document; any other file, a single-page
// TIFF included, as /predict_image, which answers it as it answers the
// file sent there, without the job's pages field (it selects the pages of
// the job's PDFs and multi-page TIFFs; /predict_image refuses it).
func (s *server) pick(f jobs.ItemFile) jobs.Route {
	doc := jobs.Route{Path: "/predict_document", Handler: s.predict(true)}
	switch {
	case f.ContentType == "application/pdf":
		return doc
	case imageio.IsPDF(f.Head):
		doc.ContentType = "application/pdf"
		return doc
	case imageio.Sniff(f.Head) == ".tif" && s.tiffPages(f) > 1:
		return doc
	}
	return jobs.Route{Path: "/predict_image", Handler: s.predict(false), Omit: []string{"pages"}}
}

// tiffPages is the number of pages of the TIFF f that /predict_document
// classifies (imageio.Doc.Pages: 1 for a pyramidal TIFF), or 1 for one
// that cannot be read (/predict_image then says why). It is counted from
// the TIFF's directories (imageio.Options.TIFFPages: a few KiB a page,
// never the image data, so a 100-MB master is not held here as well as at
// its endpoint); where they cannot tell (a malformed TIFF), the file is
// read and decoded as the endpoint decodes it, which answers the same.
func (s *server) tiffPages(f jobs.ItemFile) int {
	in, err := f.Open()
	if err != nil {
		return 1
	}
	defer in.Close()
	if ra, ok := in.(io.ReaderAt); ok {
		n, err := s.decode.TIFFPages(ra)
		switch {
		case err == nil:
			return n
		case errors.Is(err, imageio.ErrTooManyPixels):
			return 1 // Decode refuses it too
		}
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return 1
	}
	doc, err := s.decode.Decode(data, f.Name)
	if err != nil {
		return 1
	}
	return doc.Pages()
}
