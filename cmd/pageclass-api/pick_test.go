package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"io"
	"os"
	"path/filepath"
	"testing"

	"archivekit/internal/jobs"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/imageio/hostile"
)

// countedFile is an item's file as the job queue opens it, counting the
// bytes read through it.
type countedFile struct {
	f interface {
		io.ReadCloser
		io.ReaderAt
	}
	n *int64
}

func (c countedFile) Read(b []byte) (int, error) {
	n, err := c.f.Read(b)
	*c.n += int64(n)
	return n, err
}

func (c countedFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.f.ReadAt(b, off)
	*c.n += int64(n)
	return n, err
}

func (c countedFile) Close() error { return c.f.Close() }

// TestPickTIFFReadsHeaders: a job's TIFF item is sent to /predict_document
// or /predict_image by its page count, read from its directories alone: a
// 100-MB single-page master (the archive's usual master) is routed to
// /predict_image after reading a few hundred bytes of it, where it was
// read whole (and decoded) before its endpoint read it again; a scan's
// pages and a pyramid are counted as /predict_document counts them. A
// TIFF whose directories cannot tell (a loop, a truncated file) is read
// and decoded as before, and routed as before. The file is opened as the
// queue opens it: from the state folder, or from memory.
func TestPickTIFFReadsHeaders(t *testing.T) {
	s := &server{decode: imageio.DefaultOptions}
	page := func(w, h int) *image.Gray { return image.NewGray(image.Rect(0, 0, w, h)) }
	master := hostile.GrayTIFF(page(10000, 10000))
	scan := hostile.GrayTIFFAs(hostile.TIFFLayout{Order: binary.BigEndian, DirsAfter: true}, page(40, 60), page(60, 40), page(30, 30))
	loop := hostile.GrayTIFF(page(40, 60), page(60, 40))
	binary.LittleEndian.PutUint32(loop[8+2+9*12+4+40*60+2+9*12:], 8) // page 2's next directory: page 1's
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		data  []byte
		path  string
		bound bool // read from its directories, within a few KiB
	}{
		{"master.tif", master, "/predict_image", true},
		{"scan.tif", scan, "/predict_document", true},
		{"pyramid.tif", hostile.GrayTIFFAs(hostile.TIFFLayout{Reduced: []bool{false, true, true}}, page(65, 32), page(33, 16), page(16, 8)), "/predict_image", true},
		{"loop.tif", loop, "", false},
		{"truncated.tif", scan[:len(scan)-30], "", false},
	} {
		want := tc.path
		if want == "" { // as before: by Decode's count
			want = "/predict_image"
			if d, err := s.decode.Decode(tc.data, tc.name); err == nil && d.Pages() > 1 {
				want = "/predict_document"
			}
		}
		stored := filepath.Join(dir, tc.name)
		if err := os.WriteFile(stored, tc.data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{"file", "memory"} {
			t.Run(tc.name+" in "+kind, func(t *testing.T) {
				var read int64
				open := func() (io.ReadCloser, error) {
					if kind == "memory" {
						return countedFile{struct {
							*bytes.Reader
							io.Closer
						}{bytes.NewReader(tc.data), io.NopCloser(nil)}, &read}, nil
					}
					f, err := os.Open(stored)
					if err != nil {
						return nil, err
					}
					return countedFile{f, &read}, nil
				}
				r := s.pick(jobs.ItemFile{ContentType: "image/tiff", Name: tc.name, Head: tc.data[:jobs.PickHead], Open: open})
				if r.Path != want {
					t.Errorf("routed to %s, want %s", r.Path, want)
				}
				if tc.bound && read > 4096 {
					t.Errorf("read %d bytes of %d to count its pages; want its directories alone (at most 4 KiB)", read, len(tc.data))
				}
				t.Logf("%s (%d bytes): %s, %d bytes read", tc.name, len(tc.data), r.Path, read)
			})
		}
	}
}
