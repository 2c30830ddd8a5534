package jobs

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
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
	st, err := q.status(r.Context(), id)
	if err != nil {
		q.fail(w, err)
		return
	}
	items, err := q.items(r.Context(), id)
	if err != nil {
		q.fail(w, err)
		return
	}
	res := Results{ID: id, State: st.State, Items: []ItemResult{}}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "job-" + id + ".zip"}))
	w.WriteHeader(http.StatusOK)
	zw := zip.NewWriter(w)
	for _, it := range items {
		ir := ItemResult{Item: it.Index, Name: it.Name, State: it.State, Status: it.Status, ContentType: it.Type, Error: it.Error, Runs: it.Runs}
		if it.State != Queued {
			ir.URL = archiveName(it)
			if err := addFile(zw, ir.URL, q.outPath(id, it.Index)); err != nil {
				q.log.Error("results archive", "job", id, "err", err.Error())
				return // the client sees a truncated archive
			}
		}
		res.Items = append(res.Items, ir)
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
func archiveName(it item) string {
	base := service.ClientName(it.Name)
	if base == "" {
		base = "item"
	}
	base = strings.ReplaceAll(base, "/", "_")
	if strings.Contains(it.Type, "json") {
		base = strings.TrimSuffix(base, path.Ext(base)) + ".json"
	}
	return fmt.Sprintf("%04d-%s", it.Index, base)
}

func addFile(zw *zip.Writer, name, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := zw.Create(name)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return err
}
