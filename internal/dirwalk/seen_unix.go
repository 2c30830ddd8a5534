//go:build unix

package dirwalk

import (
	"io/fs"
	"syscall"
)

// seen records the folders walked, by device and inode.
type seen struct{ at map[[2]uint64]string }

func newSeen() *seen { return &seen{at: map[[2]uint64]string{}} }

// add records the folder info walked under path; when it was walked
// already, it returns the path it was walked under and false.
func (s *seen) add(info fs.FileInfo, path string) (string, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return "", true
	}
	k := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
	if first, ok := s.at[k]; ok {
		return first, false
	}
	s.at[k] = path
	return "", true
}
