// Package libvips is the cgo boundary to libvips for what govips does not
// expose: the tile height (a command-line option of libvips), returning
// freed C memory to the system, an image's pixels in a libvips buffer (no
// Go copy), a TIFF page or a PNG reduced as it is read (govips opens
// images for random access), libvips' error buffer and its tracked-memory
// high-water mark. internal/pageclass/imageio uses it; the rest of libvips
// is reached through govips.
package libvips

/*
#cgo pkg-config: vips
#include <stdio.h>
#include <stdlib.h>
#include <vips/vips.h>
#include <malloc.h>

// release_memory gives the C heap's free pages back to the system (glibc
// keeps them in its arenas otherwise: after a large PDF the process would
// stay large). It is safe while other threads decode; libvips' operation
// cache is left alone (vips_cache_drop_all frees the cache's table and is
// for shutdown only: other threads' loads crash on it).
static void release_memory(void) {
	malloc_trim(0);
}

// set_tile_height sets libvips' tile height (128 by default), which only
// its command-line options reach: libvips programs take them from argv
// (vips_add_option_entries), so they are parsed here from a fixed argv.
static int set_tile_height(int h) {
	GOptionContext *ctx = g_option_context_new(NULL);
	GOptionGroup *group = g_option_group_new("vips", "libvips", "libvips", NULL, NULL);
	vips_add_option_entries(group);
	g_option_context_set_main_group(ctx, group);
	char arg[64];
	snprintf(arg, sizeof arg, "--vips-tile-height=%d", h);
	char *args[] = {"archivekit", arg, NULL};
	char **argv = args;
	int argc = 2;
	GError *err = NULL;
	gboolean ok = g_option_context_parse(ctx, &argc, &argv, &err);
	if (err != NULL) g_error_free(err);
	g_option_context_free(ctx);
	return ok ? 0 : -1;
}

// reduce_image reads the image in buf sequentially (a TIFF's strips or
// tiles, a PNG's rows, as the reduction needs them, never the whole page),
// with the loader options in options (a libvips option string such as
// "page=2"; "" for none), reduces it by factor on both axes (vips_reduce,
// linear kernel; an image with alpha premultiplied around it, as libvips'
// thumbnail does, so transparent pixels' colours do not bleed) and writes
// the result as an uncompressed TIFF to memory; NULL on failure. A factor
// of 1 or less copies the image unreduced.
static void *reduce_image(const void *buf, size_t len, const char *options, double factor, size_t *size) {
	VipsImage *in = vips_image_new_from_buffer(buf, len, options, "access", VIPS_ACCESS_SEQUENTIAL, "fail", TRUE, NULL);
	if (in == NULL) return NULL;
	VipsImage *t[4] = {NULL, NULL, NULL, NULL}, *out = NULL;
	int r;
	if (factor <= 1.0) {
		r = vips_copy(in, &out, NULL);
	} else if (vips_image_hasalpha(in)) {
		r = vips_premultiply(in, &t[0], NULL) ||
			vips_reduce(t[0], &t[1], factor, factor, "kernel", VIPS_KERNEL_LINEAR, NULL) ||
			vips_unpremultiply(t[1], &t[2], NULL) ||
			vips_cast(t[2], &out, in->BandFmt, NULL);
	} else {
		r = vips_reduce(in, &out, factor, factor, "kernel", VIPS_KERNEL_LINEAR, NULL);
	}
	for (int i = 0; i < 4; i++)
		if (t[i] != NULL) g_object_unref(t[i]);
	g_object_unref(in);
	if (r != 0) {
		if (out != NULL) g_object_unref(out);
		return NULL;
	}
	void *p = NULL;
	r = vips_tiffsave_buffer(out, &p, size, "compression", VIPS_FOREIGN_TIFF_COMPRESSION_NONE, NULL);
	g_object_unref(out);
	return r == 0 ? p : NULL;
}
*/
import "C"

import (
	"errors"
	"reflect"
	"runtime"
	"unsafe"

	"github.com/davidbyttow/govips/v2/vips"
)

// ReleaseMemory returns the C heap's free memory to the system (glibc
// malloc_trim); safe while other goroutines decode.
func ReleaseMemory() { C.release_memory() }

// SetTileHeight sets the height in lines of libvips' tiles. Call it after
// vips.Startup, before the first operation.
func SetTileHeight(lines int) error {
	if C.set_tile_height(C.int(lines)) != 0 {
		return errors.New("libvips refused the tile height option")
	}
	return nil
}

// Buffer is a block of pixels held by libvips (outside the Go heap) until
// Close.
type Buffer struct {
	p unsafe.Pointer
	n int
}

// Bytes is the buffer's content; it is valid until Close.
func (b *Buffer) Bytes() []byte {
	if b.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(b.p), b.n)
}

// Close frees the buffer; later calls do nothing.
func (b *Buffer) Close() {
	if b.p != nil {
		C.g_free(C.gpointer(b.p))
		b.p, b.n = nil, 0
	}
}

// WriteToMemory computes ref's pixels into a libvips buffer (band-
// interleaved, in ref's band format) without a Go copy. It returns nil and
// libvips' error text (possibly empty) when libvips fails.
func WriteToMemory(ref *vips.ImageRef) (*Buffer, string) {
	var size C.size_t
	p := C.vips_image_write_to_memory(image(ref), &size)
	if p == nil {
		return nil, LastError()
	}
	return &Buffer{p: p, n: int(size)}, ""
}

// Reduce reads the image in data as libvips needs its lines (sequential
// access: a TIFF's strips or tiles, a PNG's rows), with loader options
// (a libvips option string: "page=2" for a TIFF's third page; "" for
// none), reduces it by factor on both axes (a factor of 1 or less: not
// reduced, a copy) with libvips' reduce
// and a linear (triangle) kernel as wide as the reduction, so the result
// is antialiased (alpha premultiplied around it, as the thumbnail does),
// and returns the result as an uncompressed TIFF (its metadata,
// orientation and ICC profile kept), or libvips' error text. Whether the
// format is read as a stream is the caller's choice: libvips decodes an
// interlaced PNG whole whatever the access. A streamed page is never held
// in memory at full size: govips opens images for random access, for
// which libvips decodes a strip TIFF or a PNG whole, and its resize adds a
// box shrink first for factors of 4 and more, which in libvips 8.14 costs
// more than reducing the whole way.
func Reduce(data []byte, options string, factor float64) ([]byte, string) {
	if len(data) == 0 {
		return nil, "empty image"
	}
	opts := C.CString(options)
	defer C.free(unsafe.Pointer(opts))
	var size C.size_t
	p := C.reduce_image(unsafe.Pointer(&data[0]), C.size_t(len(data)), opts, C.double(factor), &size)
	runtime.KeepAlive(data)
	if p == nil {
		return nil, LastError()
	}
	defer C.g_free(C.gpointer(p))
	return C.GoBytes(p, C.int(size)), ""
}

// image is the libvips image behind ref. govips keeps it unexported and
// only copies pixels out (ImageRef.ToBytes: a libvips buffer, then a Go
// copy of it); WriteToMemory reads the libvips buffer itself, so a decoded
// page exists once, outside the Go heap (a 4096×4096 page is 48 MiB, which
// the Go heap would keep until its next collections). imageio's
// TestUseDecodesOnce checks that this still finds the field after a govips
// upgrade.
func image(ref *vips.ImageRef) *C.VipsImage {
	f := reflect.ValueOf(ref).Elem().FieldByName("image")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.Type().Elem().Name() != "_Ctype_struct__VipsImage" {
		panic("libvips: govips.ImageRef has no field image *C.VipsImage")
	}
	return (*C.VipsImage)(unsafe.Pointer(f.Pointer()))
}

// LastError returns and clears libvips' error buffer. The buffer is
// process-wide, so under concurrency it may also hold another call's text.
func LastError() string {
	msg := C.GoString(C.vips_error_buffer())
	C.vips_error_clear()
	return msg
}

// MemHighwater is libvips' peak of tracked memory (its pixel buffers) since
// the process started.
func MemHighwater() int64 { return int64(C.vips_tracked_get_mem_highwater()) }
