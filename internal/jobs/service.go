package jobs

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"archivekit/internal/service"
)

//go:embed openapi.json
var openapiFragment []byte

// Setup gives svc the job API when JOBS_DIR (read through lookup) names a
// state folder: it opens the folder's queue for the synchronous endpoint
// path served by sync, registers POST /jobs, GET /jobs, GET /jobs/{id},
// DELETE /jobs/{id}, GET /jobs/{id}/results and GET
// /jobs/{id}/results/{item} with svc.Route, and adds them to the OpenAPI
// document. With JOBS_DIR unset or empty it returns nil (no job API; the
// methods of a nil Queue do nothing). The caller starts the workers
// (Start) when the service is warm and closes the queue when it stops.
func Setup(svc *service.Service, lookup func(string) (string, bool), path string, sync http.Handler) (*Queue, error) {
	dir, _ := lookup(EnvDir)
	if dir = strings.TrimSpace(dir); dir == "" {
		return nil, nil
	}
	workers := 1
	if v, ok := lookup(EnvWorkers); ok && strings.TrimSpace(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%q: want a whole number of at least 1", EnvWorkers, v)
		}
		workers = n
	}
	q, err := Open(context.Background(), Options{
		Dir: dir, Path: path, Handler: sync, Workers: workers,
		Logger:   svc.Logger.With("component", "jobs"),
		Stopping: func() bool { return svc.State() == service.Draining },
	})
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvDir, dir, err)
	}
	if err := svc.AddOpenAPI(openapiFragment); err != nil {
		q.Close(context.Background())
		return nil, err
	}
	svc.Route("POST /jobs", "submit a job: the form of "+path+" with one or more files; 202 with Location: /jobs/{id} (Idempotency-Key: the same job for the same request)", q.Submit)
	svc.Route("DELETE /jobs/{id}", "cancel a queued or running job", q.Cancel)
	svc.Route("GET /jobs", "jobs, newest first, with paging (limit, before)", q.List)
	svc.Route("GET /jobs/{id}", "a job's state (queued, running, succeeded, failed, canceled), item counts and errors by item", q.Get)
	svc.Route("GET /jobs/{id}/results", "a job's answers by item (JSON)", q.Results)
	svc.Route("GET /jobs/{id}/results/{item}", "one item's answer as "+path+" gave it", q.Item)
	return q, nil
}
