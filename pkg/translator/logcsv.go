package translator

import (
	"encoding/csv"
	"io"
	"strconv"

	"archivekit/pkg/alto"
)

// WriteLog writes the translation log CSV (spec 2.2): the header
// file,page_num,line_num,text_<src>,text_<tgt> (src is the run's source
// language setting, so it may read "auto"), then one row per log entry;
// page_num is empty for metadata rows.
func WriteLog(w io.Writer, rows []alto.LogRow, src, tgt string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"file", "page_num", "line_num", "text_" + src, "text_" + tgt}); err != nil {
		return err
	}
	for _, r := range rows {
		page := ""
		if r.Page > 0 {
			page = strconv.Itoa(r.Page)
		}
		if err := cw.Write([]string{r.File, page, r.Line, r.Source, r.Target}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
