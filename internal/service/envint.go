package service

import (
	"fmt"
	"strings"
)

// EnvInt reads a tool's own whole-number setting from the environment
// under the rules of the shared variables: unset gives def; set but empty,
// not a whole number, or outside lo..hi is an error naming the variable
// and the value, so the service fails to start rather than run on a value
// the operator did not ask for.
func EnvInt(lookup func(string) (string, bool), name string, def, lo, hi int) (int, error) {
	v, ok := lookup(name)
	if !ok {
		return def, nil
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, fmt.Errorf("%s is set but empty: give it a value or unset it to use the default (%d)", name, def)
	}
	return whole[int](name, v, int64(lo), int64(hi), fmt.Sprintf("is not a whole number from %d to %d", lo, hi))
}
