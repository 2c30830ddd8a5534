// Package fileowner tells which user owns a file: the one copy of the
// check that the ledger, atomicfile and the jobs' state folder make before
// they trust a file or folder another user could have planted.
package fileowner

import (
	"io/fs"
	"os"
	"syscall"
)

// Of is the user id owning the file fi describes; ok is false where the
// file system gives none.
func Of(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// Mine reports whether this process's user owns the file fi describes
// (false where the file system gives no owner).
func Mine(fi fs.FileInfo) bool {
	uid, ok := Of(fi)
	return ok && uid == os.Getuid()
}
