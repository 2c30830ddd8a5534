package docrecord

import (
	"sync"
	"testing"
)

// The project schema is compiled once and shared by concurrent requests.
func TestProjectSchemaSharedAndConcurrent(t *testing.T) {
	a, err := ProjectSchema()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := ProjectSchema(); b != a {
		t.Fatal("ProjectSchema compiled the schema again")
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			r, err := New("MTX201501307")
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = a.Validate(r)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("validation %d of a new record: %v", i, err)
		}
	}
}
