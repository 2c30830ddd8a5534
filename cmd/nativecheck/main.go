// Command nativecheck is a self-check of the native core: it prints the
// device facts, runs a TorchScript model on a test batch and translates a
// sentence with a CTranslate2 model, then reports success or the first error.
//
//	nativecheck -fixtures DIR
//
// DIR is the fixture directory made by `make fixtures`.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"archivekit/bindings/ct2"
	"archivekit/bindings/torch"
	"archivekit/internal/cliflags"
)

func main() {
	fs := cliflags.New("nativecheck", os.Stderr)
	dir := fs.String("fixtures", os.Getenv("ARCHIVEKIT_FIXTURES"), "fixture directory made by `make fixtures`")
	if code, stop := fs.Parse(os.Args[1:], os.Stdout); stop {
		os.Exit(code)
	}
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "nativecheck: FAILED:", err)
		os.Exit(1)
	}
	fmt.Println("nativecheck: OK")
}

func run(dir string) error {
	if dir == "" {
		return fmt.Errorf("no fixture directory: pass -fixtures")
	}
	fmt.Printf("libtorch %s, CUDA available %v, %d device(s), %d intra-op threads\n",
		torch.Version(), torch.CUDAAvailable(), torch.DeviceCount(), torch.NumThreads())
	if p := torch.CUDAProblem(); p != "" {
		fmt.Printf("  CUDA could not be enabled although an NVIDIA driver is present: %s\n", p)
	}
	for d := 0; d < torch.DeviceCount(); d++ {
		free, total, err := torch.MemoryInfo(d)
		if err != nil {
			return err
		}
		fmt.Printf("  cuda:%d free %d MiB of %d MiB\n", d, free>>20, total>>20)
	}
	start := time.Now()
	m, err := torch.Load(filepath.Join(dir, "tiny_vit.pt"), "cpu")
	if err != nil {
		return err
	}
	defer m.Close()
	in := torch.Tensor{Data: make([]float32, 2*3*32*32), Shape: []int64{2, 3, 32, 32}}
	probs, err := m.Probabilities(in)
	if err != nil {
		return err
	}
	fmt.Printf("TorchScript ViT: %d rows x %d classes in %v\n", len(probs), len(probs[0]), time.Since(start).Round(time.Millisecond))

	start = time.Now()
	tr, err := ct2.NewTranslator(filepath.Join(dir, "ct2", "translator"), ct2.Config{})
	if err != nil {
		return err
	}
	defer tr.Close()
	res, err := tr.Translate([]string{"Archeologický výzkum proběhl v roce 1994."}, ct2.TranslateOptions{MaxDecodingLength: 8})
	if err != nil {
		return err
	}
	fmt.Printf("CTranslate2 %s translator (random weights): %q in %v\n", ct2.Version(), res[0].Text, time.Since(start).Round(time.Millisecond))
	return nil
}
