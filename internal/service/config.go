package service

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"archivekit/internal/cliflags"
	"archivekit/internal/fetch"
	"archivekit/internal/logging"
)

// Environment variables read by LoadConfig. They are shared by every service;
// tools define their own variables elsewhere.
const (
	EnvHost             = "HOST"
	EnvPort             = "PORT"
	EnvLogLevel         = "LOG_LEVEL"
	EnvLogFormat        = "LOG_FORMAT"
	EnvGracefulShutdown = "GRACEFUL_SHUTDOWN_S"
	EnvAllowedOrigins   = "ALLOWED_ORIGINS"
	EnvMaxUploadMB      = "MAX_UPLOAD_MB"
	EnvMaxUploadBytes   = "MAX_UPLOAD_BYTES"
	EnvReload           = "RELOAD"
	// EnvRootPath is the path under which a reverse proxy publishes the
	// service (its prefix stripped before the request reaches it, as
	// uvicorn's --root-path has it): the URLs the service gives out
	// (Location, a job's links, the OpenAPI servers) begin with it.
	EnvRootPath = "ROOT_PATH"
	// EnvTrustedProxies lists the reverse proxies (addresses and CIDR
	// ranges, comma-separated) whose X-Forwarded-For the service believes:
	// a request from one of them is the client's X-Forwarded-For names.
	EnvTrustedProxies = "TRUSTED_PROXIES"
	// EnvAPIToken is the bearer token every route but the probes and the
	// static pages requires; unset, the service is open.
	EnvAPIToken = "API_TOKEN"
	// EnvAPITokenFile names a file holding the token (a mounted Secret);
	// only one of API_TOKEN and API_TOKEN_FILE may be set.
	EnvAPITokenFile = "API_TOKEN_FILE"
	// EnvAPITokensFile names a file of client tokens, one line a client:
	// its name and its token (a mounted Secret); instead of API_TOKEN and
	// API_TOKEN_FILE. Each client is then logged and admitted by its name.
	EnvAPITokensFile = "API_TOKENS_FILE"
	// EnvRequestTimeout is the deadline of one work request, from its
	// arrival to its answer, in seconds.
	EnvRequestTimeout = "REQUEST_TIMEOUT_S"
	// EnvMaxConcurrent is the number of heavy (non-GET) requests served
	// at once; more are answered 503 with Retry-After.
	EnvMaxConcurrent = "MAX_CONCURRENT_REQUESTS"
	// EnvMaxPerClient is the number of heavy requests one client (one
	// remote IP address) may have served at once; more get 503 with
	// Retry-After.
	EnvMaxPerClient = "MAX_CONCURRENT_PER_CLIENT"
	// EnvBodyTimeout is the longest time a request body may take to
	// arrive, in seconds.
	EnvBodyTimeout = "BODY_TIMEOUT_S"
	// EnvBodyMinRate is the slowest accepted body transfer, in bytes per
	// second, after the first BodyGrace.
	EnvBodyMinRate = "BODY_MIN_BYTES_PER_S"
	// EnvBookHosts lists the hosts (comma-separated host or host:port) a
	// book and its links may be fetched from, at any address, private ones
	// included; unset or empty: any public host, no private address.
	EnvBookHosts = "BOOK_HOSTS"
	// EnvBookAllowHosts is an old name of BOOK_HOSTS (translate-api's),
	// still read when BOOK_HOSTS is unset, with a warning.
	EnvBookAllowHosts = "BOOK_ALLOW_HOSTS"
)

// Defaults of the shared environment variables.
const (
	DefaultHost             = "0.0.0.0"
	DefaultPort             = 8000
	DefaultGracefulShutdown = 20 * time.Second
)

// Defaults of the request limits (tools may choose other defaults for
// REQUEST_TIMEOUT_S and MAX_CONCURRENT_REQUESTS through Options).
const (
	DefaultRequestTimeout = 300 * time.Second
	DefaultMaxConcurrent  = 16
	DefaultBodyTimeout    = 120 * time.Second
	DefaultBodyMinRate    = 16 << 10
	// BodyGrace is the time a body may take before the minimum rate
	// applies: a body must have sent at least (t - BodyGrace) × rate
	// bytes t seconds after its handler began to read it.
	BodyGrace = 10 * time.Second
	// DrainBodyGrace is the time bodies still arriving when a drain begins
	// get to finish; those slower are cut with 503 (retry elsewhere).
	DrainBodyGrace = 2 * time.Second
)

// InFlightGrace is how long the lifecycle waits for in-flight work after the
// drain window (GRACEFUL_SHUTDOWN_S) has passed; work still running then is cut.
const InFlightGrace = 25 * time.Second

// Build is what the container build files stamp into an image's
// environment: its own name and tag (DOCKER_IMAGE) and the per-release
// runner reference (RUNNER_REF). Both services list it in /info; the run
// metadata of both tools records the same two variables.
type Build struct {
	ContainerImage string `json:"container_image,omitempty"`
	RunnerRef      string `json:"runner_ref,omitempty"`
}

// Environment variables of Build.
const (
	EnvDockerImage = "DOCKER_IMAGE"
	EnvRunnerRef   = "RUNNER_REF"
)

// Config is the shared service configuration, read from the environment by
// LoadConfig.
type Config struct {
	// Host is the bind address (HOST, default 0.0.0.0).
	Host string
	// Port is the listen port (PORT, default 8000; New applies
	// Options.DefaultPort when PORT is unset).
	Port int
	// LogLevel is the minimum log level (LOG_LEVEL, default INFO).
	LogLevel slog.Level
	// LogFormat is auto, json or text (LOG_FORMAT, default auto).
	LogFormat string
	// GracefulShutdown is the drain window after SIGTERM (GRACEFUL_SHUTDOWN_S, default 20 s).
	GracefulShutdown time.Duration
	// Origins says which cross-origin callers are allowed (ALLOWED_ORIGINS).
	Origins Origins
	// MaxUploadBytes caps every request body, multipart envelope included
	// (MAX_UPLOAD_MB, else MAX_UPLOAD_BYTES, else the tool's default).
	MaxUploadBytes int64
	// RequestTimeout is the deadline of a work request (REQUEST_TIMEOUT_S;
	// 0 in LoadConfig's result when unset: New applies the tool's default).
	RequestTimeout time.Duration
	// MaxConcurrent is the number of heavy requests served at once
	// (MAX_CONCURRENT_REQUESTS; 0 when unset, as RequestTimeout).
	MaxConcurrent int
	// MaxPerClient is the number of heavy requests one remote address
	// may have served at once (MAX_CONCURRENT_PER_CLIENT; 0 when unset:
	// New applies MaxConcurrent less a quarter, at least 1, which keeps a
	// quarter of the slots for other clients).
	MaxPerClient int
	// BodyTimeout bounds the time a request body takes to arrive
	// (BODY_TIMEOUT_S, default 120 s).
	BodyTimeout time.Duration
	// BodyMinRate is the slowest accepted body transfer in bytes per
	// second after BodyGrace (BODY_MIN_BYTES_PER_S, default 16384; 0
	// turns the rate check off).
	BodyMinRate int64
	// Token is the bearer token clients must send (API_TOKEN or the
	// content of API_TOKEN_FILE); "" means none is required. Never log it.
	Token string
	// Clients are the clients of API_TOKENS_FILE, each with its own
	// token (none: Token, or an open service), as read at start; the
	// service reads ClientsFile again when it changes. Never log their
	// tokens.
	Clients     []Client
	ClientsFile string
	// clientsSum is the SHA-256 of the ClientsFile content Clients were
	// read from: the service reads the file again only when it differs.
	clientsSum [sha256.Size]byte
	// BookHosts are the hosts books may be fetched from (BOOK_HOSTS, else
	// its old name BOOK_ALLOW_HOSTS); nil: any public host.
	BookHosts []string
	// RootPath is the path a reverse proxy publishes the service under
	// (ROOT_PATH: "/pageclass"; "" at the root), which begins every URL
	// the service gives out (RootPath.Of).
	RootPath RootPath
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client (TRUSTED_PROXIES; none: the peer is the client).
	TrustedProxies []netip.Prefix
	// Build names the container image the service runs in (DOCKER_IMAGE,
	// RUNNER_REF; both empty outside an image), for /info.
	Build      Build
	originsSet bool // ALLOWED_ORIGINS is set
	// Warnings are notes about the environment that do not stop start-up
	// (for example RELOAD, which has no effect here); Run logs them.
	Warnings []string
}

// MaxUploadMB is the upload cap in MB (MiB), as reported by /info.
func (c Config) MaxUploadMB() float64 {
	return float64(c.MaxUploadBytes) / (1 << 20)
}

// Addr is Host:Port in the form net.Listen expects.
func (c Config) Addr() string {
	return joinHostPort(c.Host, c.Port)
}

func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// Origins is the parsed ALLOWED_ORIGINS value.
type Origins struct {
	// All is true when every origin is allowed (variable unset, or "*" in the list).
	All bool
	// List holds the allowed origins, lower-cased, without trailing slashes.
	List []string
}

// Allows reports whether a request from origin may be answered with CORS
// headers; "null" never is.
func (o Origins) Allows(origin string) bool {
	if origin == "" || normaliseOrigin(origin) == "null" {
		// "null" is the origin of sandboxed frames, file: pages and
		// redirects: any page can claim it, so it is never allowed.
		return false
	}
	if o.All {
		return true
	}
	origin = normaliseOrigin(origin)
	for _, a := range o.List {
		if a == origin {
			return true
		}
	}
	return false
}

// String is the setting for the start-up log: "*", "none" or the list.
func (o Origins) String() string {
	switch {
	case o.All:
		return "*"
	case len(o.List) == 0:
		return "none"
	}
	return strings.Join(o.List, ",")
}

func normaliseOrigin(s string) string {
	return strings.TrimRight(strings.ToLower(strings.TrimSpace(s)), "/")
}

// ParseOrigins parses an ALLOWED_ORIGINS value; set is false when the
// variable is unset. Unset allows every origin, the empty string none, and
// otherwise the value is a comma-separated list where "*" allows every origin.
func ParseOrigins(value string, set bool) Origins {
	if !set {
		return Origins{All: true}
	}
	var o Origins
	for _, part := range strings.Split(value, ",") {
		p := normaliseOrigin(part)
		switch p {
		case "":
		case "*":
			o.All = true
		default:
			o.List = append(o.List, p)
		}
	}
	return o
}

// LoadConfig reads the shared service variables through lookup (os.LookupEnv
// in production). defaultMaxUploadMB is the tool's upload cap in MiB when
// neither MAX_UPLOAD_MB nor MAX_UPLOAD_BYTES is set.
//
// A variable that is set but empty (except ALLOWED_ORIGINS, where empty means
// "no origin"), or that does not hold a valid value, is an error naming the
// variable and the value, so the service fails to start instead of running
// on a default the operator did not ask for. The variables are read in the
// order of the variables table; the first error is returned.
func LoadConfig(lookup func(string) (string, bool), defaultMaxUploadMB float64) (Config, error) {
	c := Config{
		Host: DefaultHost, Port: DefaultPort, LogLevel: slog.LevelInfo, LogFormat: logging.FormatAuto,
		GracefulShutdown: DefaultGracefulShutdown, Origins: Origins{All: true},
		MaxUploadBytes: int64(defaultMaxUploadMB * (1 << 20)),
		BodyTimeout:    DefaultBodyTimeout, BodyMinRate: DefaultBodyMinRate,
	}
	for _, d := range variables {
		if err := d.read(&c, lookup); err != nil {
			return c, err
		}
	}
	if err := readToken(&c, lookup); err != nil {
		return c, err
	}
	// The service's answers and records are in UTC; its log lines are in
	// local time with their offset, UTC when TZ names no zone it can read.
	if tz, _ := lookup("TZ"); tz != "" {
		if w := cliflags.ZoneWarning(tz, "the log's times"); w != "" {
			c.Warnings = append(c.Warnings, w)
		}
	}
	if c.Closed() && !c.originsSet {
		// A service closed by a token is closed to other origins too
		// unless ALLOWED_ORIGINS lists them (the spec's "unset allows
		// every origin" holds for the open service).
		c.Origins = Origins{}
	}
	return c, nil
}

// Client is a client of API_TOKENS_FILE: its name, which the service logs
// and admits it by, and its token.
type Client struct {
	Name, Token string
}

// Closed reports whether the service requires a bearer token (API_TOKEN,
// API_TOKEN_FILE or API_TOKENS_FILE).
func (c Config) Closed() bool { return c.Token != "" || len(c.Clients) > 0 }

// clientName is what a client's name in API_TOKENS_FILE may be: letters,
// digits, '.', '_' and '-', as in a log field or a user name.
var clientName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// parseClients reads data, the content of API_TOKENS_FILE at path: one
// client a line, its name and its token separated by spaces or tabs;
// blank lines and lines starting with # are skipped. A name or a token
// given twice, a malformed line or no client fails; the errors name the
// file and the line, never a token.
func parseClients(path string, data []byte) ([]Client, error) {
	name := fmt.Sprintf("%s (%s)", EnvAPITokensFile, path)
	var out []Client
	names, tokens := map[string]bool{}, map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		switch {
		case len(f) != 2:
			return nil, fmt.Errorf("%s, line %d: want a client's name and its token, separated by a space (the line is not shown)", name, i+1)
		case !clientName.MatchString(f[0]):
			return nil, fmt.Errorf("%s, line %d: the name %q is not letters, digits, '.', '_' and '-' (at most 64)", name, i+1, f[0])
		case !tokenChars(f[1]):
			return nil, fmt.Errorf("%s, line %d: client %s: the token holds characters a bearer token cannot carry (not shown)", name, i+1, f[0])
		case names[f[0]]:
			return nil, fmt.Errorf("%s, line %d: client %s is named twice", name, i+1, f[0])
		case tokens[f[1]]:
			return nil, fmt.Errorf("%s, line %d: client %s has the token of another client: each client needs its own", name, i+1, f[0])
		}
		names[f[0]], tokens[f[1]] = true, true
		out = append(out, Client{Name: f[0], Token: f[1]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s names no client: give lines of a name and a token, or unset it to leave the service open", name)
	}
	return out, nil
}

// tokenChars reports whether a token holds only what a bearer token can
// carry: printable ASCII without spaces.
func tokenChars(v string) bool {
	for _, r := range v {
		if r <= ' ' || r > '~' {
			return false
		}
	}
	return true
}

// readToken reads API_TOKEN, API_TOKEN_FILE or API_TOKENS_FILE. The
// errors name the variable and the file, never the content.
func readToken(c *Config, lookup func(string) (string, bool)) error {
	v, inline := lookup(EnvAPIToken)
	path, fromFile := lookup(EnvAPITokenFile)
	if list, ok := lookup(EnvAPITokensFile); ok {
		if inline || fromFile {
			return fmt.Errorf("%s is set with %s or %s: set one of the three", EnvAPITokensFile, EnvAPIToken, EnvAPITokenFile)
		}
		if list = strings.TrimSpace(list); list == "" {
			return fmt.Errorf("%s is set but empty: give it the client tokens file's path or unset it", EnvAPITokensFile)
		}
		data, err := os.ReadFile(list)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvAPITokensFile, err)
		}
		c.Clients, err = parseClients(list, data)
		c.ClientsFile, c.clientsSum = list, sha256.Sum256(data)
		return err
	}
	switch {
	case inline && fromFile:
		return fmt.Errorf("both %s and %s are set: set one", EnvAPIToken, EnvAPITokenFile)
	case fromFile:
		path = strings.TrimSpace(path)
		if path == "" {
			return fmt.Errorf("%s is set but empty: give it the token file's path or unset it", EnvAPITokenFile)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvAPITokenFile, err)
		}
		v = string(data)
	case !inline:
		return nil
	}
	v = strings.TrimSpace(v)
	name := EnvAPIToken
	if fromFile {
		name = fmt.Sprintf("%s (%s)", EnvAPITokenFile, path)
	}
	if v == "" {
		return fmt.Errorf("%s is empty: give a token or unset it to leave the service open", name)
	}
	if !tokenChars(v) {
		return fmt.Errorf("%s holds characters a bearer token cannot carry (spaces, line breaks, control or non-ASCII characters; the content is not shown)", name)
	}
	c.Token = v
	return nil
}

// variable describes one shared variable: how its value sets the
// configuration.
type variable struct {
	name string
	// raw: set gets the value as it is, untrimmed and possibly empty;
	// otherwise it gets it trimmed, and a set but empty value is an error.
	raw bool
	// set parses the value into c; its error names the variable.
	set func(c *Config, v string) error
	// unset, when not nil, runs when the variable is not set.
	unset func(c *Config) error
	// overriddenBy names a variable that wins: when it is set, this one
	// is not read, and a warning says so when both are set.
	overriddenBy string
}

// read applies the variable from lookup to c.
func (d variable) read(c *Config, lookup func(string) (string, bool)) error {
	v, ok := lookup(d.name)
	if d.overriddenBy != "" {
		if _, winner := lookup(d.overriddenBy); winner {
			if ok {
				c.Warnings = append(c.Warnings, fmt.Sprintf("both %s and %s are set; %s wins", d.overriddenBy, d.name, d.overriddenBy))
			}
			return nil
		}
	}
	if !ok {
		if d.unset != nil {
			return d.unset(c)
		}
		return nil
	}
	if !d.raw {
		v = strings.TrimSpace(v)
		if v == "" {
			return fmt.Errorf("%s is set but empty: give it a value or unset it to use the default", d.name)
		}
	}
	return d.set(c, v)
}

// variables are the shared variables, in the order LoadConfig reads them.
var variables = []variable{
	{name: EnvDockerImage, raw: true, set: func(c *Config, v string) error { c.Build.ContainerImage = strings.TrimSpace(v); return nil }},
	{name: EnvRunnerRef, raw: true, set: func(c *Config, v string) error { c.Build.RunnerRef = strings.TrimSpace(v); return nil }},
	{name: EnvHost, set: func(c *Config, v string) error {
		if err := checkHost(v); err != nil {
			return fmt.Errorf("%s=%q: %w", EnvHost, v, err)
		}
		c.Host = v
		return nil
	}},
	{name: EnvRootPath, set: func(c *Config, v string) (err error) {
		c.RootPath, err = ParseRootPath(v)
		if err != nil {
			return fmt.Errorf("%s=%q: %w", EnvRootPath, v, err)
		}
		return nil
	}},
	{name: EnvTrustedProxies, set: func(c *Config, v string) (err error) {
		c.TrustedProxies, err = ParseTrustedProxies(v)
		if err != nil {
			return fmt.Errorf("%s=%q: %w", EnvTrustedProxies, v, err)
		}
		return nil
	}},
	{name: EnvPort, set: func(c *Config, v string) (err error) {
		c.Port, err = whole[int](EnvPort, v, 1, 65535, "is not a port number (1 to 65535)")
		return err
	}},
	{name: EnvLogLevel, set: func(c *Config, v string) error {
		l, err := logging.ParseLevel(v)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvLogLevel, err)
		}
		c.LogLevel = l
		return nil
	}},
	{name: EnvLogFormat, raw: true, set: func(c *Config, v string) error {
		f := strings.ToLower(strings.TrimSpace(v))
		switch f {
		case "": // left to the default, as when unset
		case logging.FormatAuto, logging.FormatJSON, logging.FormatText:
			c.LogFormat = f
		default:
			return fmt.Errorf("%s=%q: use auto, json or text", EnvLogFormat, v)
		}
		return nil
	}},
	{name: EnvGracefulShutdown, set: func(c *Config, v string) (err error) {
		c.GracefulShutdown, err = seconds(EnvGracefulShutdown, v, true, 24*time.Hour, "is not a number of seconds (0 or more)")
		return err
	}},
	{name: EnvAllowedOrigins, raw: true, set: func(c *Config, v string) error {
		c.Origins, c.originsSet = ParseOrigins(v, true), true
		return nil
	}},
	{name: EnvMaxUploadMB, set: func(c *Config, v string) error {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || !(n > 0) || n > 1<<20 {
			return fmt.Errorf("%s=%q is not a positive number of megabytes", EnvMaxUploadMB, v)
		}
		c.MaxUploadBytes = int64(n * (1 << 20))
		return positiveUpload(c)
	}},
	{name: EnvMaxUploadBytes, overriddenBy: EnvMaxUploadMB, unset: positiveUpload, set: func(c *Config, v string) (err error) {
		c.MaxUploadBytes, err = whole[int64](EnvMaxUploadBytes, v, 1, math.MaxInt64, "is not a positive whole number of bytes")
		return err
	}},
	{name: EnvRequestTimeout, set: func(c *Config, v string) (err error) {
		c.RequestTimeout, err = seconds(EnvRequestTimeout, v, false, 7*24*time.Hour, "is not a positive number of seconds")
		return err
	}},
	{name: EnvBodyTimeout, set: func(c *Config, v string) (err error) {
		c.BodyTimeout, err = seconds(EnvBodyTimeout, v, false, 7*24*time.Hour, "is not a positive number of seconds")
		return err
	}},
	{name: EnvMaxConcurrent, set: func(c *Config, v string) (err error) {
		c.MaxConcurrent, err = whole[int](EnvMaxConcurrent, v, 1, 1<<20, "is not a positive whole number")
		return err
	}},
	{name: EnvMaxPerClient, set: func(c *Config, v string) (err error) {
		c.MaxPerClient, err = whole[int](EnvMaxPerClient, v, 1, 1<<20, "is not a positive whole number")
		return err
	}},
	{name: EnvBodyMinRate, set: func(c *Config, v string) (err error) {
		c.BodyMinRate, err = whole[int64](EnvBodyMinRate, v, 0, math.MaxInt64, "is not a whole number of bytes per second (0 turns the check off)")
		return err
	}},
	{name: EnvBookHosts, raw: true, set: func(c *Config, v string) error { c.BookHosts = hostList(v); return nil }},
	{name: EnvBookAllowHosts, raw: true, overriddenBy: EnvBookHosts, set: func(c *Config, v string) error {
		c.BookHosts = hostList(v)
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s is an old name of %s: it is read as %s, set %s instead", EnvBookAllowHosts, EnvBookHosts, EnvBookHosts, EnvBookHosts))
		return nil
	}},
	{name: EnvReload, raw: true, set: func(c *Config, v string) error {
		if b, valid := ParseBool(v); valid && b {
			c.Warnings = append(c.Warnings, EnvReload+" is set but has no effect: restart the service to load new code")
		}
		return nil
	}},
}

// BookPolicy is the fetch policy of the books a request or job names, both
// services': private addresses refused (the URL comes from a client); with
// BOOK_HOSTS only those hosts, at any address.
func (c Config) BookPolicy() fetch.Policy {
	p := fetch.Policy{Private: fetch.PrivateRefused}
	if len(c.BookHosts) > 0 {
		p.AllowHosts, p.OnlyHosts = c.BookHosts, true
	}
	return p
}

// hostList reads a comma-separated list of hosts; blank entries are
// dropped (nil when none is left).
func hostList(v string) []string {
	var hosts []string
	for _, h := range strings.Split(v, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// BookHostRefused is the detail of a book fetch refused for its host
// (fetch.HostError): the host, why, and the variable that allows it; ok is
// false for any other error. The host is the one in the URL (the client's,
// or a link of its book), never the address it resolved to.
func BookHostRefused(err error) (detail string, ok bool) {
	host, ok := fetch.RefusedHost(err)
	if !ok {
		return "", false
	}
	why := "it is not in " + EnvBookHosts
	if errors.Is(err, fetch.ErrPrivate) {
		why = "it is at a loopback, private or link-local address"
	}
	return fmt.Sprintf("host %s refused: %s; list it in %s (comma-separated host or host:port, e.g. %s=%s) to allow it",
		host, why, EnvBookHosts, EnvBookHosts, host), true
}

// BookReadError is the error of a book that could not be read, as a job
// records it: the refused host's detail with the way to allow it
// (BookHostRefused), else the error with internal addresses redacted
// (Redact). It wraps err, so whether it is a passing failure
// (ledger.Transient) is err's.
func BookReadError(err error) error {
	msg, ok := BookHostRefused(err)
	switch {
	case ok:
	case unreachableWords(err) != "":
		// In words a person acts on (it was Go's `Get "<internal
		// service>": dial tcp: lookup <internal address> ...`).
		msg = "its server cannot be reached: " + unreachableWords(err) + "; check the address, or try again later"
	default:
		msg = Redact(err.Error())
	}
	return &bookReadError{msg: msg, err: err}
}

// unreachableWords says why a server could not be reached, when err says
// it never answered: its name does not resolve, it refused the
// connection, there is no route to it, or it did not answer in time; ""
// for any other error.
func unreachableWords(err error) string {
	var ne net.Error
	switch why, _ := fetch.Unreached(err); {
	case why == fetch.NoSuchHost:
		return "its host name does not resolve"
	case why == fetch.ConnRefused:
		return "it refused the connection"
	case why == fetch.NoRoute:
		return "there is no route to it"
	case errors.As(err, &ne) && ne.Timeout():
		return "it did not answer in time"
	}
	return ""
}

type bookReadError struct {
	msg string
	err error
}

func (e *bookReadError) Error() string { return e.msg }
func (e *bookReadError) Unwrap() error { return e.err }

// positiveUpload refuses an upload cap under one byte (a fraction of a
// byte in MiB).
func positiveUpload(c *Config) error {
	if c.MaxUploadBytes < 1 {
		return fmt.Errorf("upload cap of %d bytes is not positive", c.MaxUploadBytes)
	}
	return nil
}

// whole parses v as a whole number from min to max; the error is "NAME=v
// " + what.
func whole[T int | int64](name, v string, min, max int64, what string) (T, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min || n > max {
		return 0, fmt.Errorf("%s=%q %s", name, v, what)
	}
	return T(n), nil
}

// seconds parses v as a number of seconds from 0 (excluded unless zeroOK)
// to max; the error is "NAME=v " + what.
func seconds(name, v string, zeroOK bool, max time.Duration, what string) (time.Duration, error) {
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || s < 0 || (s == 0 && !zeroOK) || math.IsInf(s, 0) || math.IsNaN(s) || s > max.Seconds() {
		return 0, fmt.Errorf("%s=%q %s", name, v, what)
	}
	return time.Duration(s * float64(time.Second)), nil
}

// checkHost accepts an IP address, or a host name made of letters, digits,
// hyphens and dots (RFC 1123), without looking it up: a name that does not
// resolve fails later, when the listener opens.
func checkHost(h string) error {
	if net.ParseIP(h) != nil {
		return nil
	}
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") && net.ParseIP(h[1:len(h)-1]) != nil {
		return nil
	}
	if len(h) > 253 {
		return errors.New("not an IP address or host name: longer than 253 characters")
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("not an IP address or host name (give an address such as 0.0.0.0 or ::, or a name such as localhost)")
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return fmt.Errorf("not an IP address or host name: %q is not allowed (give an address such as 0.0.0.0, or a name such as localhost, without scheme or port)", r)
			}
		}
	}
	return nil
}

// RootPath is the path a reverse proxy publishes a service under, its
// prefix stripped before a request reaches the service ("/pageclass");
// "" for a service at the root of its host.
type RootPath string

// ParseRootPath reads ROOT_PATH: a path of one or more segments of
// letters, digits and "-._~" ("/archive/pageclass"); a trailing slash
// is dropped, "/" and "" are the root.
func ParseRootPath(v string) (RootPath, error) {
	v = strings.TrimRight(strings.TrimSpace(v), "/")
	if v == "" {
		return "", nil
	}
	if !strings.HasPrefix(v, "/") {
		return "", errors.New("begin it with / (the path the proxy publishes the service under, as /pageclass)")
	}
	for _, seg := range strings.Split(v[1:], "/") {
		if seg == "" || seg == "." || seg == ".." || !rootPathSegment.MatchString(seg) {
			return "", errors.New("use path segments of letters, digits, '-', '.', '_' and '~', separated by single slashes (as /pageclass)")
		}
	}
	return RootPath(v), nil
}

var rootPathSegment = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)

// Of is the URL path the service's path p (beginning with "/") has for a
// client: p under the root path.
func (r RootPath) Of(p string) string { return string(r) + p }

// Location is a redirect's location as the client must follow it: a path
// of the service ("/info") under the root path; a relative location, or
// one with a host ("//…", "https://…"), as it is.
func (r RootPath) Location(loc string) string {
	if strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		return r.Of(loc)
	}
	return loc
}

// ParseTrustedProxies reads TRUSTED_PROXIES: addresses (10.0.0.7, ::1) and
// CIDR ranges (10.0.0.0/8), separated by commas.
func ParseTrustedProxies(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR range (as 10.0.0.0/8)", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// trusted reports whether addr is one of the trusted proxies.
func (c Config) trusted(addr netip.Addr) bool {
	for _, p := range c.TrustedProxies {
		if p.Contains(addr.Unmap()) {
			return true
		}
	}
	return false
}

// ClientAddr is the address of the client that sent r: its peer's, or,
// when the peer is a trusted proxy (TrustedProxies), the rightmost address
// of X-Forwarded-For that is not a trusted proxy (the one the nearest
// untrusted hop added; a client's own entries to its left are not
// believed). An entry that is not an address ends the walk at the hop
// that wrote it.
func (c Config) ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || len(c.TrustedProxies) == 0 || !c.trusted(peer) {
		return host
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := host
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			// Some proxies write the client's port too.
			ap, perr := netip.ParseAddrPort(strings.TrimSpace(hops[i]))
			if perr != nil {
				break
			}
			a = ap.Addr()
		}
		client = a.Unmap().String()
		if !c.trusted(a) {
			break
		}
	}
	return client
}
