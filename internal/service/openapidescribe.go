package service

import (
	"encoding/json"
	"strings"
)

// bearerScheme is the name of the bearer-token security scheme in the
// OpenAPI document.
const bearerScheme = "bearer"

// describeAuth writes the service's token rule into an OpenAPI document
// (root, decoded): a bearer security scheme, and on every operation that
// is not open (Service.open: the probes, /docs, /openapi.json and the
// tool's static pages) that scheme as an alternative to none (the token
// is required only when API_TOKEN, API_TOKEN_FILE or API_TOKENS_FILE is
// set) and the 401 answer. Without them a generated client knew neither
// the header nor the status.
func (s *Service) describeAuth(root map[string]any) error {
	comps, err := objectAt(root, "components")
	if err != nil {
		return err
	}
	schemes, err := objectAt(comps, "securitySchemes")
	if err != nil {
		return err
	}
	schemes[bearerScheme] = map[string]any{"type": "http", "scheme": "bearer",
		"description": "Required on every route but the probes, /docs, /openapi.json and the browser page when the server sets API_TOKEN, API_TOKEN_FILE or API_TOKENS_FILE: the header Authorization: Bearer followed by the token."}
	paths, err := objectAt(root, "paths")
	if err != nil {
		return err
	}
	for path, v := range paths {
		ops, _ := v.(map[string]any)
		for method, o := range ops {
			op, ok := o.(map[string]any)
			if !ok {
				continue
			}
			if _, ok := op["responses"].(map[string]any); !ok {
				continue // not an operation (parameters, summary)
			}
			if s.open(strings.ToUpper(method) + " " + path) {
				op["security"] = []any{} // said: open whatever the server sets
				continue
			}
			op["security"] = []any{map[string]any{bearerScheme: []any{}}, map[string]any{}}
			resp := op["responses"].(map[string]any)
			if _, ok := resp["401"]; !ok {
				resp["401"] = map[string]any{
					"description": "The server requires a bearer token and the request has none, or another (reason unauthorized; WWW-Authenticate: Bearer).",
					"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/HTTPError"}}},
				}
			}
		}
	}
	return nil
}

// describeHeaders writes into an OpenAPI document (root, decoded) the
// headers every answer carries: X-Request-ID on each, and Retry-After on
// each 429 and 503 (the service's own and those of the responses its
// components define). A generated client had neither as a field.
func describeHeaders(root map[string]any) error {
	add := func(status string, r any) {
		resp, ok := r.(map[string]any)
		if !ok || resp["$ref"] != nil {
			return // a reference: its component is described
		}
		headers, _ := resp["headers"].(map[string]any)
		if headers == nil {
			headers = map[string]any{}
			resp["headers"] = headers
		}
		if _, ok := headers[HeaderRequestID]; !ok {
			headers[HeaderRequestID] = map[string]any{"schema": map[string]any{"type": "string"},
				"description": "the request's id (the client's " + HeaderRequestID + " when it sent a usable one), as the service's log names it"}
		}
		if _, ok := headers["Retry-After"]; !ok && (status == "429" || status == "503") {
			headers["Retry-After"] = map[string]any{"schema": map[string]any{"type": "integer"},
				"description": "seconds to wait before trying again, when the service can tell"}
		}
	}
	paths, err := objectAt(root, "paths")
	if err != nil {
		return err
	}
	refStatus := map[string]string{} // a component response's status where the paths use it
	for p, v := range paths {
		ops, _ := v.(map[string]any)
		for _, o := range ops {
			op, _ := o.(map[string]any)
			responses, _ := op["responses"].(map[string]any)
			if _, ok := responses["503"]; !ok && responses != nil && p != "/health" && p != "/ready" && p != "/metrics" {
				// Every route but the probes answers 503 while the
				// service starts or drains (Handle): a generated client
				// could not read it where it was not listed.
				responses["503"] = map[string]any{
					"description": "the service is starting (reason starting) or shutting down (reason draining): try again after Retry-After",
					"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/HTTPError"}}},
				}
			}
			for status, r := range responses {
				if m, ok := r.(map[string]any); ok {
					if ref, ok := m["$ref"].(string); ok && (status == "429" || status == "503") {
						// a response used under a 429 or 503 anywhere gets
						// Retry-After, whatever order the map is walked in
						refStatus[strings.TrimPrefix(ref, "#/components/responses/")] = status
					}
				}
				add(status, r)
			}
		}
	}
	comps, err := objectAt(root, "components")
	if err != nil {
		return err
	}
	if responses, ok := comps["responses"].(map[string]any); ok {
		for name, r := range responses {
			add(refStatus[name], r)
		}
	}
	return nil
}

// secureOpenAPI is doc with describeAuth's and describeHeaders'
// additions, re-encoded as completeOpenAPI encodes it.
func (s *Service) secureOpenAPI(doc []byte) ([]byte, error) {
	root := map[string]any{}
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	if err := s.describeAuth(root); err != nil {
		return nil, err
	}
	if err := describeHeaders(root); err != nil {
		return nil, err
	}
	describeServer(root, s.Config.RootPath)
	return json.MarshalIndent(root, "", "  ")
}

// describeServer names the service's URL under a reverse proxy's path
// (ROOT_PATH) as the document's server, relative to the host the document
// was read from: without it a document means "/", so generated clients
// and renderers sent requests outside the proxy's path. At the root the
// document names none ("/", OpenAPI's default).
func describeServer(root map[string]any, rp RootPath) {
	if rp == "" {
		return
	}
	root["servers"] = []any{map[string]any{"url": string(rp), "description": "this service, under the path its reverse proxy publishes it at (ROOT_PATH)"}}
}
