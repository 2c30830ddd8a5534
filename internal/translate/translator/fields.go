package translator

import (
	"archivekit/internal/resources"
	"archivekit/internal/translate/metadata"
)

// LoadFields reads and compiles the field list f found by internal/resources;
// findErr is the error of finding it (returned as it is), so that a command
// can keep translating ALTO when the field list is missing.
func LoadFields(f resources.File, findErr error) ([]*metadata.XPath, error) {
	if findErr != nil {
		return nil, findErr
	}
	data, err := f.ReadFile()
	if err != nil {
		return nil, err
	}
	return metadata.ParseFields(f.Path, data)
}
