package book_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"

	"archivekit/internal/book"
)

// Read a METS file written by OCR-D: the images are found in OCR-D-IMG
// without configuration, and each page's text files are identified by
// their root element (PAGE-XML and ALTO), in physical order.
func ExampleRead() {
	b, err := book.Read(context.Background(), "testdata/mets/ocrd-kant/mets.xml", book.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Kind, "images from", b.ImageGroup)
	for _, p := range b.Pages {
		fmt.Println(p.ID, filepath.Base(p.Image.Location))
		for _, t := range p.Texts {
			fmt.Printf("  %s %s (declared %s)\n", t.Format, filepath.Base(t.Location), t.Declared)
		}
	}
	fmt.Println(len(b.Problems), "problems")
	// Output:
	// METS images from OCR-D-IMG
	// PHYS_0017 INPUT_0017.tif
	//   PAGE PAGE_0017_PAGE.xml (declared OCR-D-GT-PAGE application/vnd.prima.page+xml)
	//   ALTO PAGE_0017_ALTO.xml (declared OCR-D-GT-ALTO application/alto+xml)
	// PHYS_0020 INPUT_0020.tif
	//   PAGE PAGE_0020_PAGE.xml (declared OCR-D-GT-PAGE application/vnd.prima.page+xml)
	//   ALTO PAGE_0020_ALTO.xml (declared OCR-D-GT-ALTO application/alto+xml)
	// 0 problems
}

// Choose pages with OCR-D's syntax and leave out what the logical
// structure calls a cover, before anything is fetched.
func ExampleOptions_pages() {
	b, err := book.Read(context.Background(), "testdata/mets/goobi-ulb-74241.xml", book.Options{
		Pages:     "PHYS_0001..PHYS_0011,~PHYS_0003",
		SkipTypes: []string{"cover"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range b.Pages {
		fmt.Println(p.ID, p.Order)
	}
	for _, p := range b.Problems {
		fmt.Println(p)
	}
	// Output:
	// PHYS_0002 2
	// PHYS_0004 4
	// PHYS_0005 5
	// PHYS_0010 6
	// PHYS_0011 7
	// PHYS_0001: skipped: logical div LOG_0001 of TYPE cover
}

// Ask a IIIF Image service for no more than a 384-pixel model needs, as
// its compliance level guarantees.
func ExampleImageService_Derivative() {
	for _, s := range []book.ImageService{
		{ID: "https://example.org/iiif/p1", Version: 3, Level: 2, Width: 2480, Height: 3508},
		{ID: "https://example.org/iiif/p1", Version: 3, Level: 1, Width: 2480, Height: 3508},
		{ID: "https://example.org/iiif/p1", Version: 3, Level: 0, Sizes: []book.Size{{155, 219}, {310, 439}, {620, 877}}},
	} {
		fmt.Println(s.Derivative(384))
	}
	// Output:
	// https://example.org/iiif/p1/full/!384,384/0/default.jpg
	// https://example.org/iiif/p1/full/,384/0/default.jpg
	// https://example.org/iiif/p1/full/310,439/0/default.jpg
}
