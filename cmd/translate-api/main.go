// Command translate-api is the translation tool as an HTTP service on the
// shared lifecycle (internal/service): POST /translate turns one uploaded ALTO or
// metadata XML document into its translation, GET /info describes the
// service, and the probes, metrics and documentation come from internal/service.
//
// It listens on 0.0.0.0:8001 unless PORT says otherwise (8001 so that it
// starts beside pageclass-api's 8000; the images set PORT=8000).
//
// Environment (besides the shared HOST, PORT, LOG_LEVEL, LOG_FORMAT,
// GRACEFUL_SHUTDOWN_S, ALLOWED_ORIGINS, MAX_UPLOAD_MB / MAX_UPLOAD_BYTES):
//
//	TRANSLATION_BACKEND     mtapi (default), chat_compatible or ct2
//	TRANSLATION_URL         the translation API (aliases MTAPI_BASE_URL, the original tool's LINDAT_BASE_URL)
//	MTAPI_MIN_INTERVAL_S, MTAPI_MAX_RETRIES, MTAPI_BACKOFF_BASE_S   transport policy
//	LLM_BASE_URL, LLM_MODEL (required by chat_compatible: without them the
//	                        service does not start, exit 2), LLM_API_KEY,
//	                        LLM_PROVIDER, LLM_LANGUAGES, LLM_GUARD_*, LLM_MAX_RETRIES,
//	                        LLM_BACKOFF_BASE_S, LLM_MIN_INTERVAL_S (internal/translate/chat)
//	CT2_*                   the ct2 backend (internal/translate/ct2backend)
//	LEMMATIZER_URL          the lemmatiser, used when a vocabulary is loaded (off: none)
//	OUTPUT_MODE             default output_mode of /translate: replace, append or alternative (unset: each format its own)
//	AMCR_FIELDS_PATH        XPath field list for metadata documents (default: setup/translate/amcr-fields.txt found by internal/resources)
//	VOCABULARY_PATH         vocabulary CSV; unset or empty: no vocabulary
//	TRANSLATE_PARA_CONFIG   licence components file (default: setup/translate/para_config.txt found by internal/resources)
//	LLM_MAX_GLOSSARY_TERMS  glossary cap for backends that take one
//
// Usage:
//
//	translate-api [--version]
package main

import (
	"fmt"
	"os"

	"archivekit/internal/cliflags"
	"archivekit/internal/service"
)

func main() {
	// Configured by the environment only: --version and -h are the whole
	// command line, and anything else is refused rather than ignored.
	fs := cliflags.New("translate-api", os.Stderr)
	fs.BadExit = service.ExitConfig
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: translate-api [--version]\n"+cliflags.Wrap("Listens on port 8001 of every address (PORT and HOST set others); /frontend is its browser page. Configured by environment variables "+
			"(PORT, TRANSLATION_BACKEND, TRANSLATION_URL, MAX_UPLOAD_MB, ...): see docs/services.md.", 80, ""))
		fmt.Fprintln(fs.Output(), cliflags.Wrap(service.ExitCodesHelp, 80, ""))
	}
	if code, stop := fs.Parse(os.Args[1:], os.Stdout); stop {
		os.Exit(code)
	}
	svc, err := newService(os.LookupEnv, nil)
	if err != nil {
		os.Exit(service.ConfigFailed(os.Stderr, "translate-api", err))
	}
	os.Exit(svc.Run())
}
