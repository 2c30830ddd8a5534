package train

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestTrainingMatchesPythonRecipe trains the same base model with the same
// recipe (no augmentation, same splits, same epochs and learning rate) from
// Go and from Python torch (test/train_reference.py) over several folds, and
// requires the mean test Top-1 accuracies to agree within 3 points.
//
// Slow: set ARCHIVEKIT_SLOW=1 (make slowtest). ARCHIVEKIT_TRAIN_BASE names
// the base model folder (default: the fixture tiny CNN at 64 px).
func TestTrainingMatchesPythonRecipe(t *testing.T) {
	if os.Getenv("ARCHIVEKIT_SLOW") == "" {
		t.Skip("slow: set ARCHIVEKIT_SLOW=1")
	}
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		t.Skip("ARCHIVEKIT_PYTHON not set")
	}
	out := t.TempDir()
	base := os.Getenv("ARCHIVEKIT_TRAIN_BASE")
	if base == "" {
		base = modelDir(t, filepath.Join(out, "base"), "tiny_cnn.pt", 64)
	}
	folds, epochs, lr := 5, 10, 1e-3
	if v, err := strconv.Atoi(os.Getenv("ARCHIVEKIT_TRAIN_EPOCHS")); err == nil {
		epochs = v
	}
	res, err := Train(context.Background(), Options{Base: base, Pages: pages(t), Epochs: epochs, Batch: 16, LR: lr, Folds: folds,
		Revision: "ref", Checkpoints: filepath.Join(out, "c"), Models: filepath.Join(out, "m"), Results: filepath.Join(out, "r"), Stamp: "ref"})
	if err != nil {
		t.Fatal(err)
	}
	var goSum, pySum float64
	for _, r := range res {
		cmd := exec.Command(py, "../../../test/train_reference.py", "--model", base, "--pages", pages(t), "--datasets", r.DatasetFile,
			"--epochs", strconv.Itoa(epochs), "--batch", "16", "--lr", fmt.Sprint(lr), "--seed", strconv.Itoa(419+r.Fold))
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("python recipe, fold %d: %v", r.Fold, err)
		}
		var p struct{ Test_top1, Test_top3, Dev float64 }
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("python recipe output %q: %v", b, err)
		}
		t.Logf("fold %d: Go test top-1 %.3f (dev %.3f), Python %.3f (dev %.3f)", r.Fold, r.TestTop1, r.DevAccuracy, p.Test_top1, p.Dev)
		goSum += r.TestTop1
		pySum += p.Test_top1
	}
	goAcc, pyAcc := goSum/float64(len(res)), pySum/float64(len(res))
	t.Logf("mean test top-1 over %d folds: Go %.1f%%, Python %.1f%%", len(res), 100*goAcc, 100*pyAcc)
	if goAcc < pyAcc-0.03 {
		t.Errorf("Go recipe reaches %.1f%%, Python %.1f%%: more than 3 points below", 100*goAcc, 100*pyAcc)
	}
}
