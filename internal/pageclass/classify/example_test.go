package classify_test

import (
	"context"
	"fmt"
	"path/filepath"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/pipeline"
)

// Classify one page image with a shipped demo model (weights/demo,
// CC BY-NC 4.0) on the CPU and print its most probable category. go test
// runs an example in its package's folder, so the paths below hold from
// wherever go test is started.
func ExampleEnsemble_Predict() {
	m, err := classify.Load(filepath.Join("..", "..", "..", "weights", "demo", "model_v44"), "cpu")
	if err != nil {
		fmt.Println(err)
		return
	}
	ens, err := classify.NewEnsemble(m) // one model; more are averaged
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ens.Close()
	page := filepath.Join("..", "imageio", "testdata", "page.tif")
	_, err = ens.Predict(context.Background(), pipeline.Files([]string{page}), classify.Options{Batch: 1},
		func(p classify.Page) error {
			if p.Err != nil {
				return p.Err
			}
			fmt.Printf("%s page %d of %d: %s\n", filepath.Base(p.Name), p.Page, p.Pages, p.Top(1)[0].Label)
			return nil
		})
	if err != nil {
		fmt.Println(err)
	}
	// Output: page.tif page 1 of 1: TEXT_P
}
