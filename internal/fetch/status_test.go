package fetch_test

import (
	"fmt"
	"testing"

	"archivekit/internal/fetch"
	"archivekit/internal/ledger"
)

// An answer 429 or 5xx is a passing failure of the server, which a run
// leaves to do and a job runs again (ledger.Transient, also wrapped); any
// other status is the resource's own failure.
func TestStatusErrorTransient(t *testing.T) {
	for code, want := range map[int]bool{404: false, 403: false, 410: false, 429: true, 500: true, 502: true, 503: true, 504: true} {
		err := fmt.Errorf("page 3: %w", &fetch.StatusError{URL: "https://iiif.example.org/p3.jpg", Code: code})
		if got := ledger.Transient(err); got != want {
			t.Errorf("status %d: ledger.Transient = %v, want %v", code, got, want)
		}
	}
}
