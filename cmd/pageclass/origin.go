package main

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"

	"github.com/alecthomas/kong"

	"archivekit/internal/config"
	"archivekit/internal/resources"
)

// resourceFlags are the flags whose default is a resource found through
// internal/resources: their environment variable, when set, is their value,
// which must then name a folder as the flag's must.
var resourceFlags = map[string]resources.Resource{
	"rotation-model": resources.RotationModel,
	"demo-weights":   resources.DemoWeights,
}

// resourceDefault is the default of a flag of resourceFlags: the value of
// its environment variable when set, even when it names nothing (so that
// the run refuses it as it refuses the flag), else found, the resource
// found in the usual places.
func resourceDefault(flag, found string) string {
	if v := strings.TrimSpace(os.Getenv(resourceFlags[flag].Env)); v != "" {
		return v
	}
	return found
}

// configKeyHelp finds the config key a flag's help names as its default:
// "([SETUP] top_N: ${top_n})".
var configKeyHelp = regexp.MustCompile(`\[([A-Z]+)\] (\w+): \$\{\w+\}`)

// valueOrigins says, for each flag whose value did not come from the
// command line (given), where it came from, as a parenthesis for messages
// in kong's words: `(from envar DECODE_MEMORY="-5")` for its environment
// variable, `(from [SETUP] batch in setup/config.txt)` for a key of the
// config file ini (read from cfg). Flags left at their built-in default
// have none.
func valueOrigins(given map[string]bool, cfg resources.File, ini *config.File) map[string]string {
	out := map[string]string{}
	t := reflect.TypeOf(CLI{})
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag
		name := tag.Get("name")
		if name == "" || given[name] {
			continue
		}
		envs := strings.Split(tag.Get("env"), ",")
		if res, ok := resourceFlags[name]; ok {
			envs = []string{res.Env}
		}
		if o := envOrigin(envs, resourceFlags[name].Env != ""); o != "" {
			out[name] = o
			continue
		}
		if m := configKeyHelp.FindStringSubmatch(tag.Get("help")); m != nil && ini != nil {
			if _, ok := ini.Get(m[1], m[2]); ok {
				out[name] = fmt.Sprintf("(from [%s] %s in %s)", m[1], m[2], cfg.Path)
			}
		}
	}
	return out
}

// envOrigin names the first of envs that is set, as kong reads them (set,
// even empty), or as internal/resources does (trimmed, not empty) when
// trimmed is true; "" when none is.
func envOrigin(envs []string, trimmed bool) string {
	for _, env := range envs {
		if env == "" {
			continue
		}
		v, ok := os.LookupEnv(env)
		if trimmed {
			v = strings.TrimSpace(v)
			ok = v != ""
		}
		if ok {
			return fmt.Sprintf("(from envar %s=%q)", env, v)
		}
	}
	return ""
}

// source names flag, and where its value came from when not from the
// command line: "--decode-memory (from envar DECODE_MEMORY="-5")".
func (c *CLI) source(flag string) string {
	if o := c.Origin[flag]; o != "" {
		return "--" + flag + " " + o
	}
	return "--" + flag
}

// withOrigin adds to err, a problem with the value of flag, where that
// value came from, unless err says so already (kong's "(from envar ...)").
func withOrigin(err error, flag string, origin map[string]string) error {
	o := origin[flag]
	if err == nil || o == "" || strings.Contains(err.Error(), "(from ") {
		return err
	}
	return fmt.Errorf("%w %s", err, o)
}

// kongFlag is the flag a kong parse error is about ("--pdf-renderer must
// be one of ...": kong checks the enums of values from the environment
// without naming it), "" when none is named first.
func kongFlag(err error) string {
	var pe *kong.ParseError
	if !errors.As(err, &pe) {
		return ""
	}
	name, ok := strings.CutPrefix(err.Error(), "--")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(name, " :="); i >= 0 {
		name = name[:i]
	}
	if !longNames[name] {
		return ""
	}
	return name
}

// givenIn returns the names of the flags given on the command line of a
// kong parse (not from defaults, the environment or the config file).
func givenIn(ctx *kong.Context) map[string]bool {
	given := map[string]bool{}
	if ctx == nil {
		return given
	}
	for _, el := range ctx.Path {
		if el.Flag != nil && !el.Resolved {
			given[el.Flag.Name] = true
		}
	}
	return given
}
