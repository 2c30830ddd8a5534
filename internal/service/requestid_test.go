package service

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestRequestID: every answer carries X-Request-ID, the client's when it
// sent a usable one, else one the service made (a hostile one, which
// would go into the log, is replaced); the access line and every line the
// request logs with its context carry it as request_id (an error line
// and its access line were tied by their times only).
func TestRequestID(t *testing.T) {
	svc, srv, logs := testService(t, env{"LOG_FORMAT": "json"}, Options{})
	svc.HandleFunc("GET /noted", func(w http.ResponseWriter, r *http.Request) {
		svc.Logger.WarnContext(r.Context(), "something to note")
		WriteJSON(w, http.StatusOK, map[string]string{})
	})
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sent string
		kept bool
	}{
		{"obs-req-1", true},
		{"", false},
		{"two words", false},
		{strings.Repeat("x", 65), false},
		{"a\"b", false},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/noted", nil)
		if c.sent != "" {
			req.Header.Set(HeaderRequestID, c.sent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		id := resp.Header.Get(HeaderRequestID)
		if c.kept != (id == c.sent) || id == "" || !idChars(id) || len(id) > maxRequestID {
			t.Errorf("sent %q: answered with id %q", c.sent, id)
			continue
		}
		var noted, access bool
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil || rec["request_id"] != id {
				continue
			}
			noted = noted || rec["msg"] == "something to note"
			access = access || rec["msg"] == "request"
		}
		if !noted || !access {
			t.Errorf("id %q: on the handler's line %v, on the access line %v:\n%s", id, noted, access, logs.String())
		}
	}
}

// TestValidationReasonLogged: a 422 validation answer's access line
// carries its reason, as the other errors' lines do (it had none).
func TestValidationReasonLogged(t *testing.T) {
	svc, srv, logs := testService(t, env{"LOG_FORMAT": "json"}, Options{})
	svc.HandleFunc("GET /checked", func(w http.ResponseWriter, r *http.Request) {
		WriteValidation(w, ValidationError{Loc: []any{"query", "n"}, Msg: "not a number", Type: "value_error"})
	})
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.URL + "/checked")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.Contains(logs.String(), `"status":422`) || !strings.Contains(logs.String(), `"reason":"`+string(ReasonBadField)+`"`) {
		t.Errorf("the 422's access line has no reason:\n%s", logs.String())
	}
}
