package jobs

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"archivekit/internal/service"
)

//go:embed openapi.json
var openapiFragment []byte

// Setup gives svc the job API when JOBS_DIR (read through lookup) names a
// state folder (SQLite, one replica) or JOBS_DATABASE_URL a PostgreSQL
// database (any number of replicas; JOBS_DIR is then not used): it opens the folder's queue for the synchronous endpoint
// of o (Path, Handler, Pick, CheckFields, ItemField; Setup sets the rest from the
// environment: JOBS_DIR, JOBS_DATABASE_URL, JOBS_WORKERS, JOBS_ITEM_WORKERS, JOBS_CALLBACK_SECRET, JOBS_CALLBACK_ALLOW_PRIVATE, JOBS_RETENTION, JOBS_SCRATCH_MB, JOBS_MAX_ACTIVE), registers POST /jobs, GET /jobs, GET /jobs/{id},
// DELETE /jobs/{id}, GET /jobs/{id}/results and GET
// /jobs/{id}/results/{item} with svc.Route, and adds them to the OpenAPI
// document. With JOBS_DIR unset or empty it returns nil (no job API; the
// methods of a nil Queue do nothing). The caller starts the workers
// (Start) when the service is warm and closes the queue when it stops.
func Setup(svc *service.Service, lookup func(string) (string, bool), o Options) (*Queue, error) {
	dir, _ := lookup(EnvDir)
	url, _ := lookup(EnvDatabaseURL)
	dir, url = strings.TrimSpace(dir), strings.TrimSpace(url)
	if dir == "" && url == "" {
		return nil, nil
	}
	setting := EnvDir + "=" + dir
	if url != "" {
		// The folder is not used: uploads are staged in the temporary
		// folder, and everything else is in the database.
		dir, setting = "", EnvDatabaseURL
	}
	workers := 1
	if v, ok := lookup(EnvWorkers); ok && strings.TrimSpace(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%q: want a whole number of at least 1", EnvWorkers, v)
		}
		workers = n
	}
	o.Dir, o.DatabaseURL, o.Workers = dir, url, workers
	if v, ok := lookup(EnvItemWorkers); ok && strings.TrimSpace(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > maxItemWorkers {
			return nil, fmt.Errorf("%s=%q: want a whole number from 1 to %d", EnvItemWorkers, v, maxItemWorkers)
		}
		o.ItemWorkers, o.itemWorkersSet = n, true
	}
	if v, _ := lookup(EnvRetention); strings.TrimSpace(v) != "" {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s=%q: want a positive duration such as 168h", EnvRetention, v)
		}
		o.Retention = d
	}
	if err := limitsFromEnv(lookup, &o); err != nil {
		return nil, err
	}
	o.Logger = svc.Logger.With("component", "jobs")
	o.Root = svc.Config.RootPath
	o.Service = svc.Name()
	o.Metrics = svc.Metrics
	if o.ItemTimeout == 0 {
		o.ItemTimeout = svc.Config.RequestTimeout
	}
	o.Stopping = func() bool { return svc.State() == service.Draining }
	q, err := Open(context.Background(), o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	if err := svc.AddOpenAPI(openapiOf(o.Book, svc.FormFields("POST", o.Path))); err != nil {
		q.Close(context.Background())
		return nil, err
	}
	svc.AddBusy(q.Running) // the drain waits for them with the listener open
	svc.AddDeepCheck(q.storageCheck)
	items := "one or more files"
	if o.Book != nil {
		items += " or a book URL (" + o.Book.Field + ")"
	}
	svc.Route("POST /jobs", "submit a job: the form of "+o.Path+" with "+items+"; 202 with Location: /jobs/{id} (Idempotency-Key: the same job for the same request)", q.Submit)
	svc.Route("DELETE /jobs/{id}", "cancel a queued or running job", q.owned(q.Cancel))
	svc.Route("GET /jobs", "jobs, newest first, with paging (limit, before)", q.List)
	svc.Route("GET /jobs/{id}", "a job's state (queued, running, succeeded, failed, canceled), item counts and errors by item", q.owned(q.Get))
	svc.Route("GET /jobs/{id}/results", "a job's answers by item (JSON)", q.owned(q.Results))
	svc.Route("GET /jobs/{id}/results.zip", "a job's answers as a ZIP archive, with its results, run metadata and RO-Crate", q.owned(q.Archive))
	svc.Route("GET /jobs/{id}/results/{item}", "one item's answer as "+o.Path+" gave it", q.owned(q.Item))
	return q, nil
}

// openapiOf is the OpenAPI fragment of the job API: POST /jobs takes the
// synchronous endpoint's form fields (form: the fields its document
// describes, but its file; a generated client could send them only as
// untyped extra properties); with b, b's field, a book URL, instead of
// files.
func openapiOf(b *BookInput, form map[string]any) []byte {
	var doc map[string]any
	if err := json.Unmarshal(openapiFragment, &doc); err != nil {
		panic(err) // the embedded fragment is valid JSON (TestInfoAndOpenAPI)
	}
	at := func(m map[string]any, keys ...string) map[string]any {
		for _, k := range keys {
			m, _ = m[k].(map[string]any)
		}
		return m
	}
	schema := at(doc, "paths", "/jobs", "post", "requestBody", "content", "multipart/form-data", "schema")
	props := at(schema, "properties")
	for k, v := range form {
		if _, ok := props[k]; !ok && k != "file" {
			props[k] = v
		}
	}
	if b == nil {
		out, err := json.Marshal(doc)
		if err != nil {
			panic(err)
		}
		return out
	}
	delete(schema, "required")
	desc := "The http(s) URL of a METS file or a IIIF manifest or collection, instead of files: the job's items are the book's "
	if len(b.Fields) > 0 {
		desc += "pages (" + strings.Join(b.Fields, ", ") + " select them as the synchronous endpoint's do), and each page without an image as an item skipped (state skipped, with its reason)"
	} else {
		desc += "text files in page order, and each page without one as an item skipped (state skipped, with its reason)"
	}
	desc += ", each fetched once by the worker (bounded, from the hosts the service allows) when it runs"
	if b.Fetchers > 1 {
		desc += fmt.Sprintf(" or while an earlier item runs (%d at once)", b.Fetchers)
	}
	desc += "; each item's result carries its book identifiers (JobBookRef). Not sent to the endpoint."
	at(schema, "properties")[b.Field] = map[string]any{"type": "string", "format": "uri", "description": desc}
	for _, f := range b.Fields { // a book's selecting fields, which the item endpoint's form may not have
		if _, ok := props[f]; !ok {
			props[f] = map[string]any{"type": "string", "description": "with " + b.Field + ": selects the book's pages as the synchronous endpoint's " + f + " does"}
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return out
}

// limitsFromEnv sets o's limits and callback settings from the
// environment: JOBS_MAX_ACTIVE, JOBS_SCRATCH_MB, JOBS_CALLBACK_SECRET and
// JOBS_CALLBACK_ALLOW_PRIVATE.
func limitsFromEnv(lookup func(string) (string, bool), o *Options) error {
	if v, _ := lookup(EnvMaxActive); strings.TrimSpace(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return fmt.Errorf("%s=%q: want a whole number of at least 1", EnvMaxActive, v)
		}
		o.MaxActive = n
	}
	if v, _ := lookup(EnvScratchMB); strings.TrimSpace(v) != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 || n > 1<<30 {
			return fmt.Errorf("%s=%q: want a whole number of MiB, 0 to keep none", EnvScratchMB, v)
		}
		o.ScratchLimit = n << 20
		if n == 0 {
			o.ScratchLimit = -1
		}
	}
	if v, _ := lookup(EnvCallbackSecret); strings.TrimSpace(v) != "" {
		o.CallbackSecret = []byte(strings.TrimSpace(v))
	}
	if v, _ := lookup(EnvCallbackPrivate); strings.TrimSpace(v) != "" {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%s=%q: want 1 or 0", EnvCallbackPrivate, v)
		}
		o.CallbackPrivate = b
	}
	return nil
}
