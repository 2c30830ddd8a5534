package service

import (
	"net/http"
	"strings"
	"testing"
)

// Without this, a request with an empty Origin would get CORS headers,
// and an origin sent in another case or with a trailing slash would be
// refused although listed.
func TestOriginsAllowsEdges(t *testing.T) {
	if (Origins{All: true}).Allows("") {
		t.Error("an empty origin allowed")
	}
	o := ParseOrigins("http://localhost:8080", true)
	if !o.Allows("HTTP://Localhost:8080/") {
		t.Errorf("%+v refuses the listed origin written otherwise", o)
	}
}

// Without this, settings out of range (a 2 TiB upload cap, an upload cap
// under one byte, an infinite or NaN or over-long drain window, a
// ROOT_PATH with "." in it, a client name over 64 characters, a client
// token that is not ASCII, API_TOKENS_FILE beside API_TOKEN_FILE, an
// empty API_TOKEN_FILE) would start the service, and values at the edge
// (port 65535, a drain window of a day, "~" in a token, an empty entry
// in TRUSTED_PROXIES) would stop it.
func TestLoadConfigEdges(t *testing.T) {
	dir := t.TempDir()
	long := writeSecret(t, dir, "long", strings.Repeat("a", 65)+" tok-a\n")
	nonASCII := writeSecret(t, dir, "nonascii", "alice tök\n")
	tokens := writeSecret(t, dir, "tokens", "alice tok-a\n")
	token := writeSecret(t, dir, "token", "t\n")
	for _, tc := range []struct {
		env     env
		wantErr string
	}{
		{env{"MAX_UPLOAD_MB": "2000000"}, `MAX_UPLOAD_MB="2000000"`},
		{env{"MAX_UPLOAD_MB": "0.0000001"}, "upload cap of 0 bytes is not positive"},
		{env{"GRACEFUL_SHUTDOWN_S": "Inf"}, `GRACEFUL_SHUTDOWN_S="Inf"`},
		{env{"GRACEFUL_SHUTDOWN_S": "NaN"}, `GRACEFUL_SHUTDOWN_S="NaN"`},
		{env{"GRACEFUL_SHUTDOWN_S": "86401"}, `GRACEFUL_SHUTDOWN_S="86401"`},
		{env{"ROOT_PATH": "/a/./b"}, `ROOT_PATH="/a/./b"`},
		{env{"API_TOKENS_FILE": long}, "is not letters, digits"},
		{env{"API_TOKENS_FILE": nonASCII}, "client alice: the token holds characters"},
		{env{"API_TOKENS_FILE": tokens, "API_TOKEN_FILE": token}, "set one of the three"},
		{env{"API_TOKEN_FILE": " "}, "API_TOKEN_FILE is set but empty"},
		{env{"PORT": "65535"}, ""},
		{env{"GRACEFUL_SHUTDOWN_S": "86400"}, ""},
		{env{"API_TOKEN": "a~b"}, ""},
		{env{"TRUSTED_PROXIES": "10.0.0.1,,10.0.0.2"}, ""},
	} {
		_, err := LoadConfig(tc.env.lookup, 10)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%v: %v, want error %q", tc.env, err, tc.wantErr)
		}
	}
}

// Without this, a proxy listed or met in IPv4-mapped IPv6 form would not
// be trusted, an IPv6 proxy's neighbours would be, a peer address without
// a port would be logged and admitted as "", and a client named in mapped
// form would count apart from the same client in plain IPv4.
func TestClientAddrForms(t *testing.T) {
	for _, tc := range []struct {
		name, proxies, peer string
		xff                 []string
		want                string
	}{
		{"proxy listed in mapped form", "::ffff:10.0.0.7", "10.0.0.7:4000", []string{"198.51.100.4"}, "198.51.100.4"},
		{"proxy met in mapped form", "127.0.0.1", "[::ffff:127.0.0.1]:4000", []string{"198.51.100.4"}, "198.51.100.4"},
		{"an IPv6 proxy's neighbour", "::1", "[::2]:4000", []string{"6.6.6.6"}, "::2"},
		{"a peer without a port", "10.0.0.0/8", "192.0.2.7", []string{"6.6.6.6"}, "192.0.2.7"},
		{"a trusted peer without a port", "127.0.0.1", "127.0.0.1", []string{"198.51.100.4"}, "198.51.100.4"},
		{"a client in mapped form", "127.0.0.1", "127.0.0.1:4000", []string{"::ffff:198.51.100.4"}, "198.51.100.4"},
	} {
		c, err := LoadConfig(env{"TRUSTED_PROXIES": tc.proxies}.lookup, 10)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r := &http.Request{RemoteAddr: tc.peer, Header: http.Header{"X-Forwarded-For": tc.xff}}
		if got := c.ClientAddr(r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
