package servicetest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
)

// echo answers a multipart form with what it saw of each part.
func echo(w http.ResponseWriter, r *http.Request) {
	mr, err := r.MultipartReader()
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadRequest, err.Error())
		return
	}
	var parts []map[string]string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			service.WriteBodyError(w, err)
			return
		}
		b, _ := io.ReadAll(p)
		parts = append(parts, map[string]string{"field": p.FormName(), "file": p.FileName(),
			"type": p.Header.Get("Content-Type"), "data": string(b)})
	}
	service.WriteJSON(w, http.StatusOK, parts)
}

func TestHarness(t *testing.T) {
	stopped := false
	svc, err := service.New(service.Options{Name: "echo-api", DefaultMaxUploadMB: 1,
		LookupEnv: func(string) (string, bool) { return "", false }, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	svc.HandleFunc("POST /echo", echo)
	t.Run("serve", func(t *testing.T) {
		ts := servicetest.Serve(t, svc, func() { stopped = true })
		if svc.State() != service.Ready {
			t.Fatalf("state %v after Serve, want ready", svc.State())
		}
		parts := []servicetest.Part{
			{Field: "image", Name: "p.png", CType: "image/png", Data: []byte("png")},
			{Field: "doc", Name: "d.xml", File: true, Data: []byte("<x/>")},
			{Field: "nameless", File: true, Data: []byte("n")},
			{Field: "topn", Data: []byte("3")},
		}
		want := `[{"data":"png","field":"image","file":"p.png","type":"image/png"},` +
			`{"data":"\u003cx/\u003e","field":"doc","file":"d.xml","type":"application/octet-stream"},` +
			`{"data":"n","field":"nameless","file":"","type":"application/octet-stream"},` +
			`{"data":"3","field":"topn","file":"","type":""}]` + "\n"
		if status, b := servicetest.PostForm(t, ts.URL+"/echo", parts...); status != 200 || string(b) != want {
			t.Errorf("PostForm: %d %s\nwant 200 %s", status, b, want)
		}
		r := <-servicetest.PostAsync(ts.URL+"/echo", parts[3])
		if r.Err != nil || r.Status != 200 || string(r.Body) != `[{"data":"3","field":"topn","file":"","type":""}]`+"\n" {
			t.Errorf("PostAsync: %+v", r)
		}
		if r := <-servicetest.PostAsync("http://127.0.0.1:0/echo"); r.Err == nil {
			t.Errorf("PostAsync to no server: %+v, want an error", r)
		}
		resp, err := http.Get(ts.URL + "/health")
		if err != nil {
			t.Fatal(err)
		}
		var h struct{ Status string }
		if err := json.Unmarshal(servicetest.ReadBody(t, resp), &h); err != nil || h.Status != "ok" {
			t.Errorf("health: %+v %v", h, err)
		}
		if stopped {
			t.Error("stopped before the end of the test")
		}
	})
	if !stopped {
		t.Error("the service's stop did not run at the end of the test")
	}
}
