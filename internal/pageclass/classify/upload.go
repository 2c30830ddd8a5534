package classify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"archivekit/bindings/torch"
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
)

// Uploads are the names ParseUpload accepts, in order.
var Uploads = []string{"auto", "float", "u8"}

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

// On is the upload that runs on device: UploadAuto resolved.
func (u Upload) On(device string) Upload {
	if u != UploadAuto {
		return u
	}
	if device != "" && device != "cpu" {
		return UploadU8
	}
	return UploadFloat
}

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

// upload puts n joint pages' carriers into one torch.Batch per size on
// device; the caller closes them.
func (j *joint) upload(data []float32, n int) (map[int]*torch.Batch, error) {
	out := map[int]*torch.Batch{}
	for _, c := range j.carriers {
		b, err := torch.NewBatch(j.device, n, c.size)
		if err != nil {
			closeBatches(out)
			return nil, err
		}
		out[c.size] = b
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
