package shard_test

import (
	"fmt"

	"archivekit/internal/shard"
)

// Choosing the runs of a sharded batch to merge: shard 1/2 failed once and
// was retried; the failed try is passed over.
func ExampleChoose() {
	parts := []shard.Part{
		{Spec: shard.Spec{Index: 1, Count: 2}, Name: "b-try1.json", Status: "failed"},
		{Spec: shard.Spec{Index: 0, Count: 2}, Name: "a.json", Status: "completed", Completed: true},
		{Spec: shard.Spec{Index: 1, Count: 2}, Name: "b-try2.json", Status: "completed", Completed: true},
	}
	picks, err := shard.Choose(parts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range picks {
		fmt.Println(parts[p.Part].Spec, parts[p.Part].Name)
	}
	// Output:
	// 0/2 a.json
	// 1/2 b-try2.json
}

// Which share an input belongs to: each of the n runs of --shard i/n takes
// the inputs whose key (their path under the input folder) hashes to i.
func ExampleSpec_Has() {
	keys := []string{"box0/a.xml", "box0/b.xml", "box1/c.xml", "box2/d.xml"}
	for i := 0; i < 2; i++ {
		s, _ := shard.Parse(fmt.Sprintf("%d/2", i))
		var mine []string
		for _, k := range keys {
			if s.Has(k) {
				mine = append(mine, k)
			}
		}
		fmt.Println(s, mine)
	}
	// Output:
	// 0/2 [box0/b.xml box1/c.xml box2/d.xml]
	// 1/2 [box0/a.xml]
}
