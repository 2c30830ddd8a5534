//go:build !unix

package dirwalk

import (
	"io/fs"
	"os"
)

// seen records the folders walked (compared with os.SameFile).
type seen struct {
	infos []fs.FileInfo
	paths []string
}

func newSeen() *seen { return &seen{} }

// add records the folder info walked under path; when it was walked
// already, it returns the path it was walked under and false.
func (s *seen) add(info fs.FileInfo, path string) (string, bool) {
	for i, o := range s.infos {
		if os.SameFile(o, info) {
			return s.paths[i], false
		}
	}
	s.infos, s.paths = append(s.infos, info), append(s.paths, path)
	return "", true
}
