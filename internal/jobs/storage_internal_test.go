package jobs

import (
	"context"
	"strings"
	"testing"
)

// TestStorageCheck: the deep health check says the job folder is full
// when it has less free space than the bound (here one no disk has), and
// nothing otherwise; a folder that cannot be read is said too.
func TestStorageCheck(t *testing.T) {
	dir := t.TempDir()
	q := &Queue{opts: Options{Dir: dir}}
	if d := q.storageCheck(context.Background()); d != "" {
		t.Errorf("a temporary folder with room: %q", d)
	}
	q.opts.minFree = 1 << 62
	if d := q.storageCheck(context.Background()); !strings.Contains(d, "JOBS_DIR "+dir+" has ") || !strings.Contains(d, "jobs cannot keep their uploads and answers there") {
		t.Errorf("a full folder: %q", d)
	}
	q.opts.Dir = dir + "/gone"
	if d := q.storageCheck(context.Background()); !strings.Contains(d, "cannot be read") {
		t.Errorf("a missing folder: %q", d)
	}
}
