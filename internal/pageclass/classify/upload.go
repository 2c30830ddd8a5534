package classify

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/imageio"
)

// Upload says how a batch of pages travels to the models' device.
type Upload int

const (
	// UploadAuto is UploadU8 when the models are on a GPU, else
	// UploadFloat.
	UploadAuto Upload = iota
	// UploadFloat carries each page as the float inputs of every distinct
	// preprocessing (normalised on the host): what the CPU runs on.
	UploadFloat
	// UploadU8 carries each page as 8-bit pixels, resized on the host once
	// per input size (the same arithmetic as UploadFloat), uploaded as
	// bytes (through pinned memory, on a copy stream of its own on CUDA:
	// torch.Batch) and normalised on the device with each model's mean
	// and std. For the full-size ensemble (sizes 384 and 224, three
	// distinct normalisations) a page is 0.59 MB instead of 4.1 MB, and
	// the host neither normalises nor copies a float input per model.
	UploadU8
	// UploadPage carries each decoded page as it is, 8-bit, shrunk while
	// decoding to at most PagePixels(largest input size) pixels, uploaded
	// once (torch.SetAll) and resized on the device to every input size of
	// the members and the orientation model, once per size for all models
	// of that size, then normalised there with each model's mean and std.
	// The host only decodes: no resize, no float conversion. On the CPU
	// the same code runs on CPU tensors.
	UploadPage
)

// Uploads are the names ParseUpload accepts, in order.
var Uploads = []string{"auto", "float", "u8", "page"}

// String is the upload's name.
func (u Upload) String() string {
	if int(u) < len(Uploads) {
		return Uploads[u]
	}
	return fmt.Sprintf("Upload(%d)", int(u))
}

// ParseUpload reads an upload's name.
func ParseUpload(s string) (Upload, error) {
	for i, n := range Uploads {
		if s == n {
			return Upload(i), nil
		}
	}
	return 0, fmt.Errorf("upload %q: want one of %v", s, Uploads)
}

// On is the upload that runs on device: UploadAuto resolved (UploadPage
// on a GPU, UploadFloat on the CPU).
func (u Upload) On(device string) Upload {
	if u != UploadAuto {
		return u
	}
	if device != "" && device != "cpu" {
		return UploadPage
	}
	return UploadFloat
}

// PagePixels is the most pixels a page is decoded to with UploadPage when
// the largest input size is size: (3·size)², 1152×1152 (1.33 MP, 4 MB of
// 8-bit RGB) for 384. Larger pages are shrunk while decoding (JPEG and
// WebP by their decoders, TIFF and PNG by a linear reduction on the
// stream of lines, an interlaced PNG by a box shrink and a Lanczos
// reduction; imageio.Options.MaxDecodePixels and MinSide): an
// A4 page keeps both sides over 2.5 times the input side, what the
// antialiased resize to the input size needs, and the upload and the pages
// in flight stay bounded whatever the scan's resolution.
func PagePixels(size int) int64 { return int64(3*size) * int64(3*size) }

// decodeFor is dec as UploadPage needs it for inputs of at most size
// pixels a side: the decode budget lowered to PagePixels(size), and a JPEG
// shrunk on load by its decoder as far as both its sides stay at least
// size (imageio.Options.MinSide): an A4 scan at 300 dpi (2480×3508) is
// decoded at a quarter of each side, 620×877.
func decodeFor(dec imageio.Options, size int) imageio.Options {
	if limit := PagePixels(size); dec.MaxDecodePixels <= 0 || dec.MaxDecodePixels > limit {
		dec.MaxDecodePixels = limit
	}
	dec.MinSide = size
	return dec
}

// heldPage is a decoded page waiting for its upload (UploadPage): its
// joint row carries only its number.
type heldPage struct {
	pix  []uint8
	h, w int
}

// pageRefLen is the number of floats of a held page's number in a joint
// row: two, 24 bits each (exact in a float32).
const pageRefLen = 2

// hold keeps a copy of img's pixels until upload takes them and writes
// its number into ref.
func (j *joint) hold(img imageio.Image, ref []float32) {
	id := j.nextPage.Add(1)
	j.held.Store(id, heldPage{pix: bytes.Clone(img.Pix), h: img.H, w: img.W})
	ref[0], ref[1] = float32(id&(1<<24-1)), float32(id>>24)
}

// take removes the held page whose number is in ref and returns it.
func (j *joint) take(ref []float32) (heldPage, error) {
	id := uint64(ref[0]) | uint64(ref[1])<<24
	v, ok := j.held.LoadAndDelete(id)
	if !ok {
		return heldPage{}, fmt.Errorf("classify: no held page %d", id)
	}
	return v.(heldPage), nil
}

// resizes counts the pages resized to the input sizes on the host
// (UploadFloat, UploadU8) and on the models' device (UploadPage): tests
// check that the device path does not fall back to the host.
var resizes struct{ host, device atomic.Int64 }

// carrier is one input size's 8-bit page in a joint page: 3·size·size
// bytes (HWC), four to a float32 (packU8).
type carrier struct {
	size int
	at   int // offset in floats
}

// carrierLen is the number of floats that hold the 8-bit page of size.
func carrierLen(size int) int { return (3*size*size + 3) / 4 }

// carriers lays out one carrier per distinct size from width on and
// returns them (ascending size) with the width after them.
func carriers(sizes []int, width int) ([]carrier, int) {
	seen := map[int]bool{}
	var out []carrier
	sort.Ints(sizes)
	for _, s := range sizes {
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, carrier{size: s, at: width})
		width += carrierLen(s)
	}
	return out, width
}

// carrierOf is the carrier of size.
func carrierOf(cs []carrier, size int) carrier {
	for _, c := range cs {
		if c.size == size {
			return c
		}
	}
	panic(fmt.Sprintf("classify: no carrier of size %d", size))
}

// packU8 writes the page resized by torch.Preprocess with mean 0 and std
// 1 (CHW, values k/255) as 8-bit HWC pixels into dst, four bytes to a
// float32 (little-endian bit patterns: the floats are only ever copied,
// never computed on).
func packU8(dst []float32, r []float32) {
	plane := len(r) / 3
	b := make([]byte, 4*len(dst))
	for c := 0; c < 3; c++ {
		for p, v := range r[c*plane : (c+1)*plane] {
			b[p*3+c] = uint8(math.Round(float64(v) * 255))
		}
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// unpackU8 is the inverse of packU8: the 3·size·size bytes of src.
func unpackU8(src []float32, size int) []uint8 {
	b := make([]byte, 4*len(src))
	for i, v := range src {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b[:3*size*size]
}

// upload puts n joint pages into one torch.Batch per input size on
// device, from their carriers (UploadU8) or their held pages, resized
// there (UploadPage); the caller closes them.
func (j *joint) upload(data []float32, n int) (map[int]*torch.Batch, error) {
	out := map[int]*torch.Batch{}
	all := make([]*torch.Batch, 0, len(j.carriers))
	for _, c := range j.carriers {
		b, err := torch.NewBatch(j.device, n, c.size)
		if err != nil {
			closeBatches(out)
			return nil, err
		}
		out[c.size] = b
		all = append(all, b)
	}
	// The pages' uploads at once (Batch.Set may be called so), a few at a
	// time: one after the other, each waited for a preprocessing thread
	// behind the workers' resizes.
	errs := make([]error, n)
	sem := make(chan struct{}, uploadsAtOnce)
	var wg sync.WaitGroup
	for p := 0; p < n; p++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if j.mode == UploadPage {
				pg, err := j.take(data[p*j.width : p*j.width+pageRefLen])
				if err == nil {
					err = torch.SetAll(all, p, pg.pix, pg.h, pg.w, 3)
				}
				if err == nil {
					resizes.device.Add(1)
				}
				errs[p] = err
				return
			}
			for _, c := range j.carriers {
				at := p*j.width + c.at
				if err := out[c.size].Set(p, unpackU8(data[at:at+carrierLen(c.size)], c.size), c.size, c.size, 3); err != nil {
					errs[p] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeBatches(out)
		return nil, err
	}
	return out, nil
}

// uploadsAtOnce is the number of pages upload sends to the device at once.
const uploadsAtOnce = 8

func closeBatches(bs map[int]*torch.Batch) {
	for _, b := range bs {
		b.Close()
	}
}
