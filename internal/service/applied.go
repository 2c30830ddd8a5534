package service

import (
	"fmt"
	"net/http"
	"strconv"
)

// HeaderLimits is the answer header that says which limits were applied to
// a work request: comma-separated name=value pairs (sizes in bytes, times
// in seconds), the service's own (upload cap, request deadline, slots) and
// those a tool adds for the request (AddLimit: translate-api's memory
// estimate, pageclass-api's PDF settings).
const HeaderLimits = "X-Limits-Applied"

// setLimits writes the service's limits of a heavy request into h.
func (s *Service) setLimits(h http.Header) {
	c := s.Config
	h.Set(HeaderLimits, fmt.Sprintf("max_upload_bytes=%d, request_timeout_s=%s, max_concurrent_requests=%d, max_concurrent_per_client=%d, body_min_bytes_per_s=%d",
		c.MaxUploadBytes, strconv.FormatFloat(c.RequestTimeout.Seconds(), 'f', -1, 64), c.MaxConcurrent, c.MaxPerClient, c.BodyMinRate))
}

// AddLimit adds name=value to the limits header of the answer being
// written (before its header is sent).
func AddLimit(h http.Header, name string, value any) {
	v := fmt.Sprintf("%s=%v", name, value)
	if cur := h.Get(HeaderLimits); cur != "" {
		v = cur + ", " + v
	}
	h.Set(HeaderLimits, v)
}
