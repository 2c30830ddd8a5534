package jobs

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

// minFreeDefault is the free space under which the folder that holds the
// jobs' uploads and answers is said to be full (Queue.storageCheck).
const minFreeDefault = 64 << 20

// storageCheck is the deep health check of the folder that holds the jobs'
// uploads and answers (JOBS_DIR; with PostgreSQL, the temporary folder the
// uploads are staged in): "" while it has minFree bytes free or more, else
// what is degraded. With the folder full, jobs stayed running, /health said
// ok, and only the queue library's own errors were logged.
func (q *Queue) storageCheck(context.Context) string {
	dir := q.opts.Dir
	name := EnvDir
	if dir == "" {
		dir, name = os.TempDir(), "the temporary folder"
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Sprintf("%s %s cannot be read: %v", name, dir, err)
	}
	free := st.Bavail * uint64(st.Bsize)
	min := q.opts.minFree
	if min == 0 {
		min = minFreeDefault
	}
	if free < min {
		return fmt.Sprintf("%s %s has %d MiB free (under %d MiB): jobs cannot keep their uploads and answers there; free space in it", name, dir, free>>20, min>>20)
	}
	return ""
}
