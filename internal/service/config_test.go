package service

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/fetch"
	"archivekit/internal/ledger"
)

// env is a fake environment for LoadConfig.
type env map[string]string

func (e env) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     env
		check   func(t *testing.T, c Config)
		wantErr string
	}{
		{name: "defaults", env: env{}, check: func(t *testing.T, c Config) {
			if c.Host != "0.0.0.0" || c.Port != 8000 || c.Addr() != "0.0.0.0:8000" {
				t.Errorf("bind = %s:%d", c.Host, c.Port)
			}
			if c.LogLevel != slog.LevelInfo || c.GracefulShutdown != 20*time.Second {
				t.Errorf("level %v grace %v", c.LogLevel, c.GracefulShutdown)
			}
			if !c.Origins.All || c.MaxUploadBytes != 10<<20 {
				t.Errorf("origins %+v upload %d", c.Origins, c.MaxUploadBytes)
			}
		}},
		{name: "overrides", env: env{"HOST": "127.0.0.1", "PORT": "9000", "LOG_LEVEL": "WARNING", "GRACEFUL_SHUTDOWN_S": "2.5"}, check: func(t *testing.T, c Config) {
			if c.Addr() != "127.0.0.1:9000" || c.LogLevel != slog.LevelWarn || c.GracefulShutdown != 2500*time.Millisecond {
				t.Errorf("got %s %v %v", c.Addr(), c.LogLevel, c.GracefulShutdown)
			}
		}},
		{name: "IPv6 host", env: env{"HOST": "::1", "PORT": "8001"}, check: func(t *testing.T, c Config) {
			if c.Addr() != "[::1]:8001" {
				t.Errorf("addr %s", c.Addr())
			}
		}},
		{name: "zero drain window", env: env{"GRACEFUL_SHUTDOWN_S": "0"}, check: func(t *testing.T, c Config) {
			if c.GracefulShutdown != 0 {
				t.Errorf("grace %v", c.GracefulShutdown)
			}
		}},
		{name: "MAX_UPLOAD_MB", env: env{"MAX_UPLOAD_MB": "1"}, check: func(t *testing.T, c Config) {
			if c.MaxUploadBytes != 1<<20 || c.MaxUploadMB() != 1 {
				t.Errorf("upload %d (%v MB)", c.MaxUploadBytes, c.MaxUploadMB())
			}
		}},
		{name: "MAX_UPLOAD_MB fraction", env: env{"MAX_UPLOAD_MB": "0.5"}, check: func(t *testing.T, c Config) {
			if c.MaxUploadBytes != 1<<19 {
				t.Errorf("upload %d", c.MaxUploadBytes)
			}
		}},
		{name: "MAX_UPLOAD_BYTES fallback", env: env{"MAX_UPLOAD_BYTES": "12345"}, check: func(t *testing.T, c Config) {
			if c.MaxUploadBytes != 12345 {
				t.Errorf("upload %d", c.MaxUploadBytes)
			}
		}},
		{name: "MAX_UPLOAD_MB wins over BYTES", env: env{"MAX_UPLOAD_MB": "2", "MAX_UPLOAD_BYTES": "12345"}, check: func(t *testing.T, c Config) {
			if c.MaxUploadBytes != 2<<20 || len(c.Warnings) != 1 {
				t.Errorf("upload %d warnings %v", c.MaxUploadBytes, c.Warnings)
			}
		}},
		{name: "origins unset: all", env: env{}, check: func(t *testing.T, c Config) {
			if !c.Origins.Allows("http://anything.example") {
				t.Error("origin refused")
			}
		}},
		{name: "origins empty: none", env: env{"ALLOWED_ORIGINS": ""}, check: func(t *testing.T, c Config) {
			if c.Origins.All || c.Origins.Allows("http://localhost:8080") {
				t.Errorf("origins %+v allow", c.Origins)
			}
		}},
		{name: "origins list", env: env{"ALLOWED_ORIGINS": " http://localhost:8080 , HTTP://127.0.0.1:8080/,"}, check: func(t *testing.T, c Config) {
			if !c.Origins.Allows("http://localhost:8080") || !c.Origins.Allows("http://127.0.0.1:8080") || c.Origins.Allows("http://localhost:9090") {
				t.Errorf("origins %+v", c.Origins)
			}
		}},
		{name: "origins star", env: env{"ALLOWED_ORIGINS": "*"}, check: func(t *testing.T, c Config) {
			if !c.Origins.Allows("http://x.example") {
				t.Error("star refused")
			}
		}},
		{name: "RELOAD warns", env: env{"RELOAD": "true"}, check: func(t *testing.T, c Config) {
			if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "RELOAD") {
				t.Errorf("warnings %v", c.Warnings)
			}
		}},
		// A TZ the service cannot read is said (its log lines are in UTC
		// then); one it reads is not.
		{name: "unreadable TZ warns", env: env{"TZ": "XYZ-13:45"}, check: func(t *testing.T, c Config) {
			if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `TZ="XYZ-13:45"`) || !strings.Contains(c.Warnings[0], "the log's times are in UTC") {
				t.Errorf("warnings %v", c.Warnings)
			}
		}},
		{name: "readable TZ", env: env{"TZ": "UTC"}, check: func(t *testing.T, c Config) {
			if len(c.Warnings) != 0 {
				t.Errorf("warnings %v", c.Warnings)
			}
		}},
		{name: "empty PORT", env: env{"PORT": ""}, wantErr: "PORT is set but empty"},
		{name: "empty GRACEFUL_SHUTDOWN_S", env: env{"GRACEFUL_SHUTDOWN_S": ""}, wantErr: "GRACEFUL_SHUTDOWN_S is set but empty"},
		{name: "empty LOG_LEVEL", env: env{"LOG_LEVEL": " "}, wantErr: "LOG_LEVEL is set but empty"},
		{name: "empty HOST", env: env{"HOST": ""}, wantErr: "HOST is set but empty"},
		{name: "empty MAX_UPLOAD_MB", env: env{"MAX_UPLOAD_MB": ""}, wantErr: "MAX_UPLOAD_MB is set but empty"},
		{name: "bad PORT", env: env{"PORT": "80a"}, wantErr: `PORT="80a" is not a port number`},
		{name: "PORT out of range", env: env{"PORT": "70000"}, wantErr: `PORT="70000" is not a port number`},
		{name: "PORT zero", env: env{"PORT": "0"}, wantErr: `PORT="0"`},
		{name: "bad GRACEFUL_SHUTDOWN_S", env: env{"GRACEFUL_SHUTDOWN_S": "soon"}, wantErr: `GRACEFUL_SHUTDOWN_S="soon" is not a number of seconds`},
		{name: "negative GRACEFUL_SHUTDOWN_S", env: env{"GRACEFUL_SHUTDOWN_S": "-1"}, wantErr: `GRACEFUL_SHUTDOWN_S="-1"`},
		{name: "bad LOG_LEVEL", env: env{"LOG_LEVEL": "LOUD"}, wantErr: `LOG_LEVEL: unknown log level "LOUD"`},
		{name: "bad LOG_FORMAT", env: env{"LOG_FORMAT": "xml"}, wantErr: `LOG_FORMAT="xml"`},
		{name: "bad MAX_UPLOAD_MB", env: env{"MAX_UPLOAD_MB": "ten"}, wantErr: `MAX_UPLOAD_MB="ten" is not a positive number`},
		{name: "zero MAX_UPLOAD_MB", env: env{"MAX_UPLOAD_MB": "0"}, wantErr: `MAX_UPLOAD_MB="0"`},
		{name: "bad MAX_UPLOAD_BYTES", env: env{"MAX_UPLOAD_BYTES": "1.5"}, wantErr: `MAX_UPLOAD_BYTES="1.5" is not a positive whole number`},
		{name: "host names", env: env{"HOST": "api-1.internal.example."}, check: func(t *testing.T, c Config) {
			if c.Host != "api-1.internal.example." {
				t.Errorf("host %q", c.Host)
			}
		}},
		{name: "HOST with scheme", env: env{"HOST": "http://0.0.0.0"}, wantErr: `HOST="http://0.0.0.0": not an IP address or host name: ':' is not allowed`},
		{name: "HOST with space", env: env{"HOST": "local host"}, wantErr: `HOST="local host": not an IP address or host name`},
		{name: "HOST with port", env: env{"HOST": "localhost:8000"}, wantErr: `HOST="localhost:8000"`},
		{name: "HOST empty label", env: env{"HOST": "a..b"}, wantErr: `HOST="a..b"`},
		{name: "request limits default", env: env{}, check: func(t *testing.T, c Config) {
			if c.RequestTimeout != 0 || c.MaxConcurrent != 0 || c.BodyTimeout != 120*time.Second || c.BodyMinRate != 16384 {
				t.Errorf("limits %v %d %v %d", c.RequestTimeout, c.MaxConcurrent, c.BodyTimeout, c.BodyMinRate)
			}
		}},
		{name: "request limits set", env: env{"REQUEST_TIMEOUT_S": "30", "MAX_CONCURRENT_REQUESTS": "4", "BODY_TIMEOUT_S": "5.5", "BODY_MIN_BYTES_PER_S": "0"}, check: func(t *testing.T, c Config) {
			if c.RequestTimeout != 30*time.Second || c.MaxConcurrent != 4 || c.BodyTimeout != 5500*time.Millisecond || c.BodyMinRate != 0 {
				t.Errorf("limits %v %d %v %d", c.RequestTimeout, c.MaxConcurrent, c.BodyTimeout, c.BodyMinRate)
			}
		}},
		{name: "zero REQUEST_TIMEOUT_S", env: env{"REQUEST_TIMEOUT_S": "0"}, wantErr: `REQUEST_TIMEOUT_S="0" is not a positive number of seconds`},
		{name: "bad BODY_TIMEOUT_S", env: env{"BODY_TIMEOUT_S": "1m"}, wantErr: `BODY_TIMEOUT_S="1m"`},
		{name: "bad MAX_CONCURRENT_REQUESTS", env: env{"MAX_CONCURRENT_REQUESTS": "0"}, wantErr: `MAX_CONCURRENT_REQUESTS="0" is not a positive whole number`},
		{name: "bad BODY_MIN_BYTES_PER_S", env: env{"BODY_MIN_BYTES_PER_S": "-1"}, wantErr: `BODY_MIN_BYTES_PER_S="-1"`},
		{name: "empty REQUEST_TIMEOUT_S", env: env{"REQUEST_TIMEOUT_S": ""}, wantErr: "REQUEST_TIMEOUT_S is set but empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig(tt.env.lookup, 10)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadConfigToolDefault(t *testing.T) {
	c, err := LoadConfig(env{}.lookup, 50)
	if err != nil || c.MaxUploadBytes != 50<<20 {
		t.Fatalf("translator default: %d, %v", c.MaxUploadBytes, err)
	}
}

// The image's name and runner reference (set by the build files) reach
// Config.Build, which /info of both services lists; outside an image both
// stay empty and /info omits them.
func TestLoadConfigBuild(t *testing.T) {
	env := map[string]string{EnvDockerImage: "localhost/archivekit/pageclass-api:0.1.0", EnvRunnerRef: " 17db408 "}
	c, err := LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, 16)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Build{ContainerImage: "localhost/archivekit/pageclass-api:0.1.0", RunnerRef: "17db408"}); c.Build != want {
		t.Fatalf("Build = %+v, want %+v", c.Build, want)
	}
	c, err = LoadConfig(func(string) (string, bool) { return "", false }, 16)
	if err != nil {
		t.Fatal(err)
	}
	if c.Build != (Build{}) {
		t.Fatalf("Build outside an image = %+v, want empty", c.Build)
	}
}

// TestLoadConfigOrder: the shared variables are read in the order of
// the variables table (MAX_UPLOAD_MB again to see whether it overrides
// MAX_UPLOAD_BYTES), and the first invalid one is the error.
func TestLoadConfigOrder(t *testing.T) {
	var read []string
	_, err := LoadConfig(func(k string) (string, bool) { read = append(read, k); return "", false }, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{EnvDockerImage, EnvRunnerRef, EnvHost, EnvRootPath, EnvTrustedProxies, EnvPort, EnvLogLevel, EnvLogFormat, EnvGracefulShutdown,
		EnvAllowedOrigins, EnvMaxUploadMB, EnvMaxUploadBytes, EnvMaxUploadMB, EnvRequestTimeout, EnvBodyTimeout,
		EnvMaxConcurrent, EnvMaxPerClient, EnvBodyMinRate, EnvBookHosts, EnvBookAllowHosts, EnvBookHosts, EnvReload, EnvAPIToken, EnvAPITokenFile, EnvAPITokensFile, "TZ"}
	if strings.Join(read, " ") != strings.Join(want, " ") {
		t.Errorf("read %v\nwant %v", read, want)
	}
	for _, tc := range []struct {
		env  env
		want string
	}{
		{env{"PORT": "x", "HOST": "a b"}, "HOST="},
		{env{"BODY_MIN_BYTES_PER_S": "-1", "REQUEST_TIMEOUT_S": "0"}, "REQUEST_TIMEOUT_S="},
		{env{"MAX_UPLOAD_MB": "x", "MAX_UPLOAD_BYTES": ""}, "MAX_UPLOAD_MB="},
		{env{"MAX_UPLOAD_BYTES": "", "LOG_FORMAT": "xml"}, "LOG_FORMAT="},
		{env{"MAX_UPLOAD_BYTES": "", "MAX_CONCURRENT_REQUESTS": "0"}, "MAX_UPLOAD_BYTES is set but empty"},
	} {
		if _, err := LoadConfig(tc.env.lookup, 10); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one starting %q", tc.env, err, tc.want)
		}
	}
}

func TestEnvInt(t *testing.T) {
	for _, tc := range []struct {
		env     env
		want    int
		wantErr string
	}{
		{env{}, 50, ""},
		{env{"N": " 7 "}, 7, ""},
		{env{"N": ""}, 0, "N is set but empty"},
		{env{"N": "0"}, 0, `N="0" is not a whole number from 1 to 100`},
		{env{"N": "1.5"}, 0, `N="1.5" is not a whole number`},
	} {
		got, err := EnvInt(tc.env.lookup, "N", 50, 1, 100)
		if tc.wantErr == "" && (err != nil || got != tc.want) {
			t.Errorf("%v: %d, %v; want %d", tc.env, got, err, tc.want)
		}
		if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%v: error %v, want one containing %q", tc.env, err, tc.wantErr)
		}
	}
}

// Both services read the hosts books may be fetched from as BOOK_HOSTS;
// translate-api's old name BOOK_ALLOW_HOSTS still works, with a warning
// naming BOOK_HOSTS, and loses to BOOK_HOSTS when both are set. Before,
// each service read only its own name, so one setting allowed a host for
// one service and not the other.
func TestLoadConfigBookHosts(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want []string
		warn string
	}{
		{"unset", nil, nil, ""},
		{"BOOK_HOSTS", map[string]string{EnvBookHosts: " 127.0.0.1:8765, iiif.example.org ,"}, []string{"127.0.0.1:8765", "iiif.example.org"}, ""},
		{"empty", map[string]string{EnvBookHosts: ""}, nil, ""},
		{"old name", map[string]string{EnvBookAllowHosts: "127.0.0.1"}, []string{"127.0.0.1"}, "BOOK_ALLOW_HOSTS is an old name of BOOK_HOSTS"},
		{"both", map[string]string{EnvBookHosts: "a.example", EnvBookAllowHosts: "b.example"}, []string{"a.example"}, "both BOOK_HOSTS and BOOK_ALLOW_HOSTS are set; BOOK_HOSTS wins"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := LoadConfig(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }, 16)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.BookHosts, c.want) {
				t.Errorf("BookHosts = %q, want %q", cfg.BookHosts, c.want)
			}
			warnings := strings.Join(cfg.Warnings, "\n")
			if (c.warn == "") != (warnings == "") || !strings.Contains(warnings, c.warn) {
				t.Errorf("warnings %q, want %q", warnings, c.warn)
			}
		})
	}
}

// A book fetch refused for its host is told with the host and the
// variable that allows it; other errors are not.
func TestBookHostRefused(t *testing.T) {
	refused := &fetch.HostError{Host: "127.0.0.1:8765", Err: fmt.Errorf("%w: 127.0.0.1:8765", fetch.ErrPrivate)}
	d, ok := BookHostRefused(fmt.Errorf("reading the book: %w", refused))
	if !ok || !strings.Contains(d, "host 127.0.0.1:8765 refused: it is at a loopback, private or link-local address") ||
		!strings.Contains(d, "BOOK_HOSTS=127.0.0.1:8765") {
		t.Errorf("%q, %v", d, ok)
	}
	notListed := &fetch.HostError{Host: "other.example", Err: fmt.Errorf("http://other.example/m.json: %w", fetch.ErrHost)}
	if d, ok := BookHostRefused(notListed); !ok || !strings.Contains(d, "host other.example refused: it is not in BOOK_HOSTS") {
		t.Errorf("%q, %v", d, ok)
	}
	if d, ok := BookHostRefused(errors.New("404 Not Found")); ok {
		t.Errorf("a 404 told as a refused host: %q", d)
	}
}

// A book that could not be read is recorded by a job with the refused
// host's way out, or its error redacted, and stays a passing failure
// exactly when its cause is one: a refused address, which a dial error
// wraps, is not (before, a job read such a book again and again).
func TestBookReadError(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("%w: 127.0.0.1:8765", fetch.ErrPrivate)}
	tests := []struct {
		name      string
		err       error
		says      string
		transient bool
	}{
		{"refused address", &fetch.HostError{Host: "127.0.0.1:8765", Err: dial}, "BOOK_HOSTS=127.0.0.1:8765", false},
		{"server busy", fmt.Errorf("reading: %w", &fetch.StatusError{URL: "https://b.example/m.json", Code: 503}), "503", true},
		{"not a book", errors.New("neither a METS file nor a IIIF manifest"), "neither a METS file", false},
		// A server that never answered, in words a person acts on (it
		// was Go's `Get "<internal service>": dial tcp: lookup ...`).
		{"no such host", &url.Error{Op: "Get", URL: "https://gone.example/m.json", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "gone.example", IsNotFound: true}}},
			"its server cannot be reached: its host name does not resolve; check the address", true},
		{"refused", &url.Error{Op: "Get", URL: "https://b.example/m.json", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}},
			"its server cannot be reached: it refused the connection", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := BookReadError(tt.err)
			if !strings.Contains(err.Error(), tt.says) || ledger.Transient(err) != tt.transient || !errors.Is(err, tt.err) {
				t.Errorf("%q: transient %v, want %q and %v", err, ledger.Transient(err), tt.says, tt.transient)
			}
		})
	}
}

func TestParseRootPath(t *testing.T) {
	for _, c := range []struct {
		in, want string
		bad      bool
	}{
		{"", "", false},
		{"/", "", false},
		{"/pageclass", "/pageclass", false},
		{" /pageclass/ ", "/pageclass", false},
		{"/archive/v1.2/translate~x", "/archive/v1.2/translate~x", false},
		{"pageclass", "", true},
		{"//evil.example/x", "", true},
		{"/a//b", "", true},
		{"/a/../b", "", true},
		{"/a?b", "", true},
		{"/a b", "", true},
		{"/a%2Fb", "", true},
		{"http://host/pageclass", "", true},
	} {
		got, err := ParseRootPath(c.in)
		if (err != nil) != c.bad || string(got) != c.want {
			t.Errorf("ParseRootPath(%q) = %q, %v; want %q, error %v", c.in, got, err, c.want, c.bad)
		}
	}
	if _, err := LoadConfig(func(k string) (string, bool) { return map[string]string{"ROOT_PATH": "pageclass"}[k], k == "ROOT_PATH" }, 10); err == nil || !strings.Contains(err.Error(), "ROOT_PATH=\"pageclass\"") {
		t.Errorf("LoadConfig with ROOT_PATH=pageclass: %v, want an error naming it", err)
	}
	if got := RootPath("/pageclass").Of("/jobs/1"); got != "/pageclass/jobs/1" {
		t.Errorf("Of: %q", got)
	}
	for loc, want := range map[string]string{"/info": "/pageclass/info", "../docs": "../docs", "//cdn.example/x": "//cdn.example/x", "https://h/x": "https://h/x"} {
		if got := RootPath("/pageclass").Location(loc); got != want {
			t.Errorf("Location(%q) = %q, want %q", loc, got, want)
		}
	}
}

func TestClientAddr(t *testing.T) {
	c := Config{}
	var err error
	if c.TrustedProxies, err = ParseTrustedProxies(" 10.0.0.0/8, 127.0.0.1 ,::1"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"no proxy header", "192.0.2.7:4000", nil, "192.0.2.7"},
		{"an untrusted peer's header is not believed", "192.0.2.7:4000", []string{"6.6.6.6"}, "192.0.2.7"},
		{"a trusted proxy's client", "127.0.0.1:4000", []string{"198.51.100.4"}, "198.51.100.4"},
		{"a client's forged entries left of the proxy's", "127.0.0.1:4000", []string{"6.6.6.6, 198.51.100.4"}, "198.51.100.4"},
		{"two trusted hops", "127.0.0.1:4000", []string{"198.51.100.4, 10.1.2.3"}, "198.51.100.4"},
		{"two header lines", "10.9.9.9:4000", []string{"6.6.6.6", "198.51.100.4"}, "198.51.100.4"},
		{"every hop trusted", "127.0.0.1:4000", []string{"10.1.2.3"}, "10.1.2.3"},
		{"an entry that is not an address", "127.0.0.1:4000", []string{"198.51.100.4, unknown"}, "127.0.0.1"},
		{"IPv6 proxy", "[::1]:4000", []string{"2001:db8::5"}, "2001:db8::5"},
		{"an entry with its port", "127.0.0.1:4000", []string{"198.51.100.1:4711"}, "198.51.100.1"},
		{"an IPv6 entry with its port", "127.0.0.1:4000", []string{"[2001:db8::7]:80"}, "2001:db8::7"},
		{"a trusted proxy without the header", "127.0.0.1:4000", nil, "127.0.0.1"},
	} {
		r := &http.Request{RemoteAddr: tc.peer, Header: http.Header{"X-Forwarded-For": tc.xff}}
		if got := c.ClientAddr(r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := (Config{}).ClientAddr(&http.Request{RemoteAddr: "127.0.0.1:1", Header: http.Header{"X-Forwarded-For": {"6.6.6.6"}}}); got != "127.0.0.1" {
		t.Errorf("no TRUSTED_PROXIES: %q, want the peer", got)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "10.0.0.1:80"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q): no error", bad)
		}
	}
}
