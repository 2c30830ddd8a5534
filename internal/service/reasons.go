package service

// Reason is the stable, machine-readable code of an error answer: the
// "reason" of {"status": 422, "reason": "bad_field", "detail": "..."}.
// The codes are a closed list (Reasons); a client may switch on them, and
// they do not change with the wording of detail. Both services use the
// one list; each code says which of them can answer it.
type Reason string

// The reasons, in the order of Reasons. The status is the usual one; the
// code, not the status, says what went wrong.
const (
	// ReasonBadRequest: the request body or its multipart form cannot be
	// read (400).
	ReasonBadRequest Reason = "bad_request"
	// ReasonBadField: a form field or query parameter is missing,
	// malformed, out of range, repeated or not taken with the others
	// (422; 400 for a field over its length limit). The list form of
	// detail (HTTPValidationError) always has this reason.
	ReasonBadField Reason = "bad_field"
	// ReasonUnsupportedMediaType: the request's Content-Type is not
	// multipart/form-data (415, translate-api).
	ReasonUnsupportedMediaType Reason = "unsupported_media_type"
	// ReasonUnsupportedFormat: the uploaded file is not of a kind the
	// endpoint takes: a PDF sent to /predict_image, an image to
	// /predict_document, a file labelled PDF that is not one, a .txt list
	// sent to /translate (400 or 422).
	ReasonUnsupportedFormat Reason = "unsupported_format"
	// ReasonUnsupportedEncoding: the document's declared character
	// encoding is unknown or does not decode (415, translate-api).
	ReasonUnsupportedEncoding Reason = "unsupported_encoding"
	// ReasonNotWellFormed: the XML document is not well-formed; detail
	// names the line (500 as spec 7 says, translate-api).
	ReasonNotWellFormed Reason = "not_well_formed"
	// ReasonDTDRefused: the XML document carries a DOCTYPE or entity
	// declarations, which are refused (500, translate-api).
	ReasonDTDRefused Reason = "dtd_refused"
	// ReasonUndecodable: the image or PDF cannot be decoded (422,
	// pageclass-api).
	ReasonUndecodable Reason = "undecodable"
	// ReasonSchemaTooNew: document_json was written by a newer schema
	// than the service supports (422).
	ReasonSchemaTooNew Reason = "schema_too_new"
	// ReasonTooLarge: the request body is over MAX_UPLOAD_MB (413).
	ReasonTooLarge Reason = "too_large"
	// ReasonTooManyPixels: an image or page is over the decoded-pixel cap
	// (413, pageclass-api).
	ReasonTooManyPixels Reason = "too_many_pixels"
	// ReasonTooManyPages: a PDF or book has more pages than one request
	// classifies (MAX_PDF_PAGES, 413), or a multi-page image was sent to
	// /predict_image (422) (pageclass-api).
	ReasonTooManyPages Reason = "too_many_pages"
	// ReasonTooManyFiles: a book has more text files than one request
	// translates (422, translate-api).
	ReasonTooManyFiles Reason = "too_many_files"
	// ReasonTooComplex: the XML document is over a work limit (nesting
	// depth, node count) (422, translate-api).
	ReasonTooComplex Reason = "too_complex"
	// ReasonRenderBudget: the pages cost more decoding time than one
	// request may spend (-max-render) (422, pageclass-api).
	ReasonRenderBudget Reason = "render_budget"
	// ReasonNothingTranslated: the document had nothing to translate
	// (422, translate-api).
	ReasonNothingTranslated Reason = "nothing_translated"
	// ReasonUnsupportedLanguage: the backend does not offer the language
	// pair asked for (422, translate-api).
	ReasonUnsupportedLanguage Reason = "unsupported_language"
	// ReasonUnknownVersion: the model revision asked for cannot be served
	// (422, pageclass-api).
	ReasonUnknownVersion Reason = "unknown_version"
	// ReasonFieldListUnreadable: a metadata document came while the field
	// list (AMCR_FIELDS_PATH) cannot be read (422, translate-api).
	ReasonFieldListUnreadable Reason = "field_list_unreadable"
	// ReasonBadBook: the book URL does not lead to a readable METS file
	// or IIIF manifest, or none of its pages or files could be used (422).
	ReasonBadBook Reason = "bad_book"
	// ReasonHostNotAllowed: the book URL is on a private address or a
	// host not allowed (403).
	ReasonHostNotAllowed Reason = "host_not_allowed"
	// ReasonFetchFailed: fetching the book failed (its server answered an
	// error or could not be reached) (502).
	ReasonFetchFailed Reason = "fetch_failed"
	// ReasonUnauthorized: the service requires a bearer token (API_TOKEN)
	// and none or a wrong one came (401).
	ReasonUnauthorized Reason = "unauthorized"
	// ReasonOriginNotAllowed: a CORS preflight from an origin not in
	// CORS_ORIGINS (400).
	ReasonOriginNotAllowed Reason = "origin_not_allowed"
	// ReasonNotFound: no such path or asset (404).
	ReasonNotFound Reason = "not_found"
	// ReasonMethodNotAllowed: the path does not take this method (405).
	ReasonMethodNotAllowed Reason = "method_not_allowed"
	// ReasonJobNotFound: no job has this id (404).
	ReasonJobNotFound Reason = "job_not_found"
	// ReasonItemNotFound: the job has no such item (404).
	ReasonItemNotFound Reason = "item_not_found"
	// ReasonJobEnded: the job has already ended and cannot be cancelled
	// (409).
	ReasonJobEnded Reason = "job_ended"
	// ReasonItemNotReady: the item has not run yet (409).
	ReasonItemNotReady Reason = "item_not_ready"
	// ReasonItemSkipped: the item was skipped (a book's page without a
	// text file): it has no answer, and never will (404).
	ReasonItemSkipped Reason = "item_skipped"
	// ReasonItemCanceled: the job was canceled before the item ran: it
	// has no answer, and never will (404).
	ReasonItemCanceled Reason = "item_canceled"
	// ReasonIdempotencyConflict: the Idempotency-Key was used for another
	// request (422).
	ReasonIdempotencyConflict Reason = "idempotency_conflict"
	// ReasonStarting: the service is warming up (503, Retry-After).
	ReasonStarting Reason = "starting"
	// ReasonDraining: the service is shutting down; retry on another
	// replica (503, Retry-After).
	ReasonDraining Reason = "draining"
	// ReasonOverloaded: every work slot (MAX_CONCURRENT_REQUESTS) or the
	// memory budget is taken (503, Retry-After).
	ReasonOverloaded Reason = "overloaded"
	// ReasonRateLimited: this client already has MAX_CONCURRENT_PER_CLIENT
	// requests being served (503, Retry-After).
	ReasonRateLimited Reason = "rate_limited"
	// ReasonTimeout: the request was not finished within
	// REQUEST_TIMEOUT_S and its work was stopped (503); a job item past
	// its time limit is recorded 504 with it.
	ReasonTimeout Reason = "timeout"
	// ReasonBodyTimeout: the request body arrived too slowly (408).
	ReasonBodyTimeout Reason = "body_timeout"
	// ReasonStorageFull: the service has no room left to store the
	// request (its disk or quota is full) (507, Retry-After).
	ReasonStorageFull Reason = "storage_full"
	// ReasonBackendUnavailable: the translation backend is not available
	// (503, translate-api).
	ReasonBackendUnavailable Reason = "backend_unavailable"
	// ReasonBackendError: the translation backend failed after its
	// retries (500, translate-api).
	ReasonBackendError Reason = "backend_error"
	// ReasonInternal: the service failed (inference, a record failing its
	// schema, a job store error) (500).
	ReasonInternal Reason = "internal"
)

// Reasons is the closed list of reason codes, in the order documented
// (docs/services.md) and listed in the OpenAPI document's ErrorReason
// enum.
func Reasons() []Reason {
	return []Reason{
		ReasonBadRequest, ReasonBadField, ReasonUnsupportedMediaType, ReasonUnsupportedFormat,
		ReasonUnsupportedEncoding, ReasonNotWellFormed, ReasonDTDRefused, ReasonUndecodable,
		ReasonSchemaTooNew, ReasonTooLarge, ReasonTooManyPixels, ReasonTooManyPages,
		ReasonTooManyFiles, ReasonTooComplex, ReasonRenderBudget, ReasonNothingTranslated,
		ReasonUnsupportedLanguage, ReasonUnknownVersion, ReasonFieldListUnreadable, ReasonBadBook,
		ReasonHostNotAllowed, ReasonFetchFailed, ReasonUnauthorized, ReasonOriginNotAllowed,
		ReasonNotFound, ReasonMethodNotAllowed, ReasonJobNotFound, ReasonItemNotFound,
		ReasonJobEnded, ReasonItemNotReady, ReasonItemSkipped, ReasonItemCanceled, ReasonIdempotencyConflict, ReasonStarting,
		ReasonDraining, ReasonOverloaded, ReasonRateLimited, ReasonTimeout,
		ReasonBodyTimeout, ReasonStorageFull, ReasonBackendUnavailable, ReasonBackendError, ReasonInternal,
	}
}
