package jobs

import (
	"archive/zip"
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"archivekit/internal/rocrate"
	"archivekit/internal/service"
)

// zipResults writes a job's answers as a ZIP archive: one file an item
// that has run, named NNNN-name: the name its download has (its
// Content-Disposition, page_en.alto.xml), else the item's with the extension of the answer's type
// (a JSON answer name.json; an XML answer keeps the file's name), and
// results.json, the JSON of GET /jobs/{id}/results without the inline
// answers; an ended job's also run-metadata.json, its run metadata, and
// ro-crate-metadata.json, the archive as an RO-Crate.
func (q *Queue) zipResults(w http.ResponseWriter, r *http.Request, id string) {
	_, f, _, err := q.jobState(r.Context(), id)
	if err != nil {
		q.fail(w, err)
		return
	}
	meta, err := q.runMeta(r.Context(), id)
	if err != nil {
		q.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "job-" + id + ".zip"}))
	w.WriteHeader(http.StatusOK)
	zw := zip.NewWriter(w)
	// Each entry is dated when the job ended, in UTC (zip.Writer.Create
	// leaves the date zero, which unzip shows as 1980-00-00): an ended
	// job's archive is the same bytes at every download, whatever the
	// service's zone, so its checksum can be kept. One still running is
	// dated when the archive is made.
	made := time.Now().UTC()
	var finished sql.NullInt64
	if q.queryRow(r.Context(), `SELECT finished_ms FROM archivekit_job WHERE id = ?`, id).Scan(&finished) == nil && finished.Valid {
		made = time.UnixMilli(finished.Int64).UTC()
	}
	create := func(name string) (io.Writer, error) {
		return zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: made})
	}
	var parts []rocrate.JobPart
	put := func(name, title, ctype string, b []byte) error {
		out, err := create(name)
		if err == nil {
			_, err = out.Write(b)
		}
		parts = append(parts, rocrate.NewJobPart(name, title, ctype, b))
		return err
	}
	res, err := q.results(r.Context(), id, func(ir *ItemResult) error {
		ir.URL = answerName(ir.Item, ir.Name, ir.disposition, ir.ContentType)
		b, err := q.output(r.Context(), id, ir.Item)
		if err != nil {
			return err
		}
		return put(ir.URL, fmt.Sprintf("answer of item %d (%s)", ir.Item, ir.Name), mediaType(ir.ContentType), b)
	}, nil)
	if err == nil {
		b, _ := json.MarshalIndent(res, "", "  ")
		err = put("results.json", "the job's items, states and errors", "application/json", b)
	}
	if err == nil && meta != nil {
		err = put(runMetaFile, "run metadata of job "+id, "application/json", meta)
		var c []byte
		if err == nil {
			c, err = crate(res, parts, meta, f)
		}
		if err == nil {
			var out io.Writer
			if out, err = create(crateFile); err == nil {
				_, err = out.Write(c)
			}
		}
	}
	if err != nil {
		q.log.Error("results archive", "job", id, "error", err.Error())
		return // the client sees a truncated archive
	}
	if err := zw.Close(); err != nil {
		q.log.Error("results archive", "job", id, "error", err.Error())
	}
}

// mediaType is a Content-Type without its parameters.
func mediaType(ctype string) string {
	t, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return ""
	}
	return t
}

// attachmentName is the file name a Content-Disposition gives ("" when
// none): a translation's answer is named as its download is
// (page_en.alto.xml), not as its input.
func attachmentName(disposition string) string {
	if disposition == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(disposition)
	if err != nil || params["filename"] == "" {
		return ""
	}
	return path.Base(params["filename"])
}

// answerName is the name of item index's answer in the results archive
// and the job's run metadata: the file name its Content-Disposition gives
// (page_en.alto.xml), else the item's own (name).
func answerName(index int, name, disposition, ctype string) string {
	return archiveName(index, cmp.Or(attachmentName(disposition), name), ctype)
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
