package service_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"archivekit/internal/service"
)

// The lifecycle of a service: New reads the environment, Run warms up and
// opens the listener (ready), serves, and on SIGTERM drains: new work is
// refused with 503 while the request in flight finishes, then Run returns
// 143.
func Example() {
	port := freePort()
	env := map[string]string{"HOST": "127.0.0.1", "PORT": strconv.Itoa(port)}
	svc, err := service.New(service.Options{
		Name: "echo-api", Version: "1.0.0", DefaultMaxUploadMB: 1,
		Index:     &service.Index{Welcome: "echo-api: POST text to /echo"},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		LogOutput: io.Discard,
	})
	if err != nil {
		fmt.Println(err)
		os.Exit(service.ExitConfig)
	}
	release := make(chan struct{})
	svc.Route("POST /echo", "answer the body", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			service.WriteBodyError(w, err)
			return
		}
		if string(b) == "slow" {
			<-release
		}
		service.WriteJSON(w, http.StatusOK, map[string]string{"echo": string(b)})
	})
	exit := make(chan int)
	go func() { exit <- svc.Run() }()

	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for call("GET", base+"/ready", "") != "200 {\"status\":\"ready\"}" {
		time.Sleep(10 * time.Millisecond) // refused while warming up
	}
	fmt.Println("ready:", call("GET", base+"/ready", ""))
	fmt.Println("health:", call("GET", base+"/health", ""))
	fmt.Println("echo:", call("POST", base+"/echo", "hello"))

	slow := make(chan string)
	go func() { slow <- call("POST", base+"/echo", "slow") }()
	for svc.InFlight() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGTERM) // as a container stop would
	for svc.State() != service.Draining {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("draining:", call("GET", base+"/ready", ""))
	fmt.Println("new work:", call("POST", base+"/echo", "late")[:3])
	close(release)
	fmt.Println("in flight:", <-slow)
	fmt.Println("exit code:", <-exit)
	// Output:
	// ready: 200 {"status":"ready"}
	// health: 200 {"status":"ok"}
	// echo: 200 {"echo":"hello"}
	// draining: 503 {"status":"draining"}
	// new work: 503
	// in flight: 200 {"echo":"slow"}
	// exit code: 143
}

// client opens a connection per request, so each sees the service's state.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// call returns the status and body of a request, or the error.
func call(method, url, body string) string {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strconv.Itoa(resp.StatusCode) + " " + strings.TrimSpace(string(b))
}

// freePort returns a free port of 127.0.0.1.
func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
