package classify_test

import (
	"context"
	"math"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
)

// WarmUp runs one batch of synthetic pages through every member, whatever
// the upload, and leaves the ensemble's answers as they were: the pages
// classified after it get the probabilities a cold ensemble gives them.
func TestWarmUp(t *testing.T) {
	root := classifytest.Ensemble(t, t.TempDir())
	files := classifytest.Pages(t, 1)[:4]
	for _, up := range []classify.Upload{classify.UploadFloat, classify.UploadPage} {
		o := classify.Options{Batch: 3, Workers: 2, Upload: up}
		cold, _ := classify.NewEnsemble(loadFive(t, root)...)
		want := predict(t, cold, files, o)
		warm, _ := classify.NewEnsemble(loadFive(t, root)...)
		st, err := warm.WarmUp(context.Background(), o)
		if err != nil {
			t.Fatalf("%v: %v", up, err)
		}
		if st.Rows != 3 || st.Failed != 0 || st.Batches != 1 || st.Forward <= 0 {
			t.Errorf("%v: warm-up stats %+v, want 3 rows in 1 batch through the models", up, st)
		}
		got := predict(t, warm, files, o)
		for r := range want {
			for i := range want[r].Probs {
				for c, v := range want[r].Probs[i] {
					if math.Abs(got[r].Probs[i][c]-v) > 1e-5 {
						t.Fatalf("%v: page %d model %d class %d: %v after the warm-up, %v cold", up, r, i, c, got[r].Probs[i][c], v)
					}
				}
			}
		}
	}
	// A cancelled context stops it with the context's error.
	e, _ := classify.NewEnsemble(loadFive(t, root)...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.WarmUp(ctx, classify.Options{Batch: 2}); err == nil {
		t.Error("a cancelled warm-up returned no error")
	}
}
