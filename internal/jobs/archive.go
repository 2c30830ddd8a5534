package jobs

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"path"
	"strings"

	"archivekit/internal/service"
)

// zipResults writes a job's answers as a ZIP archive: one file an item
// that has run, named NNNN-name with the extension of the answer's type
// (a JSON answer name.json; an XML answer keeps the file's name), and
// results.json, the JSON of GET /jobs/{id}/results without the inline
// answers.
func (q *Queue) zipResults(w http.ResponseWriter, r *http.Request, id string) {
	if _, err := q.status(r.Context(), id); err != nil {
		q.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "job-" + id + ".zip"}))
	w.WriteHeader(http.StatusOK)
	zw := zip.NewWriter(w)
	res, err := q.results(r.Context(), id, func(ir *ItemResult) error {
		ir.URL = archiveName(ir.Item, ir.Name, ir.ContentType)
		b, err := q.output(r.Context(), id, ir.Item)
		if err != nil {
			return err
		}
		out, err := zw.Create(ir.URL)
		if err == nil {
			_, err = out.Write(b)
		}
		return err
	})
	if err != nil {
		q.log.Error("results archive", "job", id, "err", err.Error())
		return // the client sees a truncated archive
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if f, err := zw.Create("results.json"); err == nil {
		_, _ = f.Write(b)
	}
	if err := zw.Close(); err != nil {
		q.log.Error("results archive", "job", id, "err", err.Error())
	}
}

// archiveName is an item's answer's name in the archive.
func archiveName(index int, name, ctype string) string {
	base := service.ClientName(name)
	if base == "" {
		base = "item"
	}
	base = strings.ReplaceAll(base, "/", "_")
	if strings.Contains(ctype, "json") {
		base = strings.TrimSuffix(base, path.Ext(base)) + ".json"
	}
	return fmt.Sprintf("%04d-%s", index, base)
}
