// Command pageclass-api is the page classifier as an HTTP service on the
// shared lifecycle (internal/service): POST /predict_image and POST
// /predict_document classify an uploaded page image or PDF with one model or
// the five-model ensemble, GET /info describes the service and GET
// /frontend serves the browser interface. The five ensemble models are
// loaded and warmed before the service reports ready; when the published
// models are absent, the shipped demo ensemble is served (logged as a
// warning). Pages of concurrent requests are batched together on the way to
// each model: an idle model runs a page at once, and the pages that arrive
// while it is busy form its next batch (at most -max-batch pages; -batch-wait
// makes an idle model wait that long for a fuller batch, default none).
//
// The environment holds only the shared service variables (HOST, PORT,
// LOG_LEVEL, LOG_FORMAT, GRACEFUL_SHUTDOWN_S, ALLOWED_ORIGINS, MAX_UPLOAD_MB /
// MAX_UPLOAD_BYTES, default 10) and the hub ones (HUB_ENDPOINT, HUB_TOKEN,
// HUB_HOME); the rest comes from the configuration file and the flags.
//
// Usage:
//
//	pageclass-api [-version] [-config setup/config.txt] [-models DIR] [-demo weights/demo]
//	              [-device cpu] [-max-batch 16] [-batch-wait 0] [-no-batching]
package main

import (
	"flag"
	"fmt"
	"os"

	"archivekit/internal/cliflags"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/service"
)

func main() {
	// A decoder process of the service (imageio.Isolation) serves and
	// exits here.
	imageio.ServeIfWorker()
	fs := cliflags.New("pageclass-api", os.Stderr)
	fs.BadExit = service.ExitConfig
	var o options
	o.register(fs.FlagSet)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pageclass-api [flags]\n"+cliflags.Wrap("Listens on port 8000 of every address (PORT and HOST set others); /frontend is its browser page. "+
			"Limits, jobs and the rest are set by environment variables (MAX_UPLOAD_MB, JOBS_DIR, API_TOKEN, ...): see docs/services.md.", 80, "")+"\nFlags:")
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), cliflags.Wrap(service.ExitCodesHelp, 80, ""))
	}
	if code, stop := fs.Parse(os.Args[1:], os.Stdout); stop {
		os.Exit(code)
	}
	fs.Visit(func(f *flag.Flag) {
		o.RotationGiven = o.RotationGiven || f.Name == "rotation-model"
		o.DemoGiven = o.DemoGiven || f.Name == "demo"
	})
	s, err := newServer(o, os.LookupEnv, nil)
	if err != nil {
		os.Exit(service.ConfigFailed(os.Stderr, "pageclass-api", err))
	}
	os.Exit(s.svc.Run())
}
