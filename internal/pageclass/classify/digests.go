package classify

import (
	"fmt"

	"archivekit/internal/pageclass/modelmeta"
)

// Digests keeps the digest (modelmeta.Digest) of each model folder one run
// uses, so that what the run records is the model that ran: the digest of
// the bytes a model was loaded from (Model.Digest, Orientation.Digest,
// modelmeta.Contents.Digest) where the model was loaded, else one taken
// once per run. A folder whose files were replaced between two reads of
// the same run is an error, never a model recorded under another's digest.
// The zero value is ready to use.
type Digests struct {
	m map[string]string
}

// Loaded sets the digest of model folder dir to d, that of the bytes a
// model was loaded from. A digest taken earlier in the run from another
// read of the folder must be the same. (Runs that need the digests before
// loading read each folder once and load from those bytes: Read.)
func (s *Digests) Loaded(dir, d string) error {
	if old, ok := s.m[dir]; ok && old != d {
		return fmt.Errorf("model %s: its files changed during the run (digest %s when the run started, %s when loaded)", dir, old, d)
	}
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[dir] = d
	return nil
}

// Of is modelmeta.Digest of a model folder, computed once per run; that of
// the bytes loaded where the model was loaded first (Loaded).
func (s *Digests) Of(dir string) (string, error) {
	if d, ok := s.m[dir]; ok {
		return d, nil
	}
	d, err := modelmeta.Digest(dir)
	if err != nil {
		return "", fmt.Errorf("model %s: %w", dir, err)
	}
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[dir] = d
	return d, nil
}

// Read reads each folder once (modelmeta.ReadFolder into Folder.Contents)
// and records its digest, that of those bytes, for runs that need the
// digests before the models load or load a model more than once (pageclass
// --parallel and --eval). The models then load from the bytes digested, so
// a model.pt replaced meanwhile is neither read nor recorded.
func (s *Digests) Read(folders []Folder) error {
	for i := range folders {
		c, err := modelmeta.ReadFolder(folders[i].Dir)
		if err != nil {
			return err
		}
		folders[i].Contents = c
		if err := s.Loaded(folders[i].Dir, c.Digest); err != nil {
			return err
		}
	}
	return nil
}
