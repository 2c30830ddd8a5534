package ledger_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"archivekit/internal/ledger"
)

// A run records each item as it completes; a run stopped part-way (here
// after one of two items) is resumed by a later run of the same
// configuration, which finds the first item done, with the same content,
// and does only the second. The stopped run's file is no longer held: it
// is among the ended runs (a resumed run marks such runs interrupted).
func ExampleOpenRun() {
	out, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(out)
	cfg := map[string]any{"model": "v4.4", "digest": "9f2c"}
	items := map[string]string{"box0/a.png": "the bytes of a", "box0/b.png": "the bytes of b"}
	log := slog.New(slog.DiscardHandler)

	first, _, err := ledger.OpenRun(ledger.Run{Output: out, Tool: "demo", Config: cfg, Name: "261126-101500"}, log)
	if err != nil {
		fmt.Println(err)
		return
	}
	first.Record(ledger.Entry{Item: "box0/a.png", Digest: ledger.DigestBytes([]byte(items["box0/a.png"])), State: ledger.Done, Data: []byte(`{"class":"text"}`)})
	first.Close() // stopped before b.png

	resumed, key, err := ledger.OpenRun(ledger.Run{Output: out, Tool: "demo", Config: cfg, Name: "261126-102000"}, log)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resumed.Close()
	fmt.Println("ledger folder:", filepath.Base(resumed.Dir()) == "demo_"+key, "runs read:", resumed.Files())
	for _, item := range []string{"box0/a.png", "box0/b.png"} {
		if e, ok := resumed.Lookup(item, ledger.DigestBytes([]byte(items[item]))); ok {
			fmt.Println(item, e.State, string(e.Data))
			continue
		}
		fmt.Println(item, "to do")
	}
	for _, f := range resumed.Ended() {
		fmt.Println("ended:", filepath.Base(f))
	}
	// Output:
	// ledger folder: true runs read: 1
	// box0/a.png done {"class":"text"}
	// box0/b.png to do
	// ended: 261126-101500.jsonl
}
