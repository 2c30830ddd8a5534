package imageio_test

import (
	"fmt"
	"os"
	"path/filepath"

	"archivekit/internal/pageclass/imageio"
)

// Decoding in decoder processes: the program's main calls
// imageio.ServeIfWorker first (here the test binary's TestMain does), and
// the caller sets Options.Isolation. A file that crashes or hangs a
// decoder then fails alone with ErrDecoderCrashed or ErrDecodeTimeout.
func ExampleIsolation() {
	decoders, err := imageio.NewIsolation(2, imageio.DefaultDecodeTimeout)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer decoders.Close()
	o := imageio.DefaultOptions
	o.Isolation = decoders

	data, err := os.ReadFile(filepath.Join("testdata", "page.tif"))
	if err != nil {
		fmt.Println(err)
		return
	}
	doc, err := o.Decode(data, "page.tif")
	if err != nil {
		fmt.Println(err)
		return
	}
	img, err := doc.Page(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, g, b := img.At(0, 0)
	fmt.Printf("%d×%d, first pixel %d,%d,%d\n", img.W, img.H, r, g, b)
	// Output: 8×4, first pixel 0,200,0
}
