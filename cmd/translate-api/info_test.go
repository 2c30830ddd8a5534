package main

// info is the body of GET /info as a client reads it (spec 4.2).
type info struct {
	Limits struct {
		MaxUploadMB float64 `json:"max_upload_mb"`
	} `json:"limits"`
	SupportedFormats []docFormat `json:"supported_formats"`
}
