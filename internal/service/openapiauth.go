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
			if !ok || s.open(strings.ToUpper(method)+" "+path) {
				continue
			}
			if _, ok := op["responses"].(map[string]any); !ok {
				continue // not an operation (parameters, summary)
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

// secureOpenAPI is doc with describeAuth's additions, re-encoded as
// completeOpenAPI encodes it.
func (s *Service) secureOpenAPI(doc []byte) ([]byte, error) {
	root := map[string]any{}
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	if err := s.describeAuth(root); err != nil {
		return nil, err
	}
	return json.MarshalIndent(root, "", "  ")
}
