package cliflags

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/alecthomas/kong"

	"archivekit/internal/version"
)

// Kong is a kong parser set up alike for the batch commands (pageclass,
// translate): named for the command, ${version} (for a kong.VersionFlag)
// its version.Line, help and errors written to the writers given, and an
// exit hook that ends Parse without ending the process (after --help or
// --version), so the command returns its exit code like any other.
type Kong struct {
	*kong.Kong
	code int
}

// exited unwinds kong's Parse from its exit hook.
type exited struct{}

// NewKong returns the parser of the command name over grammar (a pointer to
// its flags struct); opts add the command's own options (description,
// groups, variables).
func NewKong(name string, grammar any, stdout, stderr io.Writer, opts ...kong.Option) (*Kong, error) {
	k := &Kong{}
	base := []kong.Option{
		kong.Name(name),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { k.code = code; panic(exited{}) }),
		kong.Vars{"version": version.Line(name)},
	}
	p, err := kong.New(grammar, append(base, opts...)...)
	if err != nil {
		return nil, err
	}
	k.Kong = p
	return k, nil
}

// Parse parses args. done is set when kong ended the command itself
// (--help, --version), with code its exit code; otherwise err is a parse
// error, a UsageError.
func (k *Kong) Parse(args []string) (ctx *kong.Context, code int, done bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(exited); !ok {
				panic(v)
			}
			ctx, code, done, err = nil, k.code, true, nil
		}
	}()
	ctx, err = k.Kong.Parse(k.OneDash(args))
	if err != nil {
		return ctx, ExitUsage, false, UsageError{plainKong(err)}
	}
	return ctx, ExitOK, false, nil
}

// OneDash turns a long flag name written with one dash ("-resume",
// "-raw=false"), as Go's flag package and the original tools' users write
// them, into that flag; kong alone reads "-resume" as the short flags -r,
// -e, ... Both commands take them alike (translate refused them). Words
// after a bare "--" are left alone. Parse calls it; a command that reads
// its arguments before parsing calls it first.
func (k *Kong) OneDash(args []string) []string {
	names := map[string]bool{}
	for _, group := range k.Model.AllFlags(false) {
		for _, f := range group {
			names[f.Name] = true
			for _, a := range f.Aliases {
				names[a] = true
			}
			switch n := f.Tag.Negatable; n {
			case "":
			case "_": // kong's default negation, --no-NAME
				names["no-"+f.Name] = true
			default:
				names[n] = true
			}
		}
	}
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, _, _ := strings.Cut(a, "=")
		if len(name) > 2 && name[0] == '-' && name[1] != '-' && names[name[1:]] {
			a = "-" + a
		}
		out = append(out, a)
	}
	return out
}

// kongNoValue is kong's message for a flag whose value is missing:
// `--target_lang: expected string value but got "EOL" (<EOL>)`.
var kongNoValue = regexp.MustCompile(`^(.*): expected (\S+) value but got "(EOL)" \((.*)\)$`)

// plainKong says kong's parser words in the user's: a flag given last
// without its value "needs a value", not `got "EOL" (<EOL>)`.
func plainKong(err error) error {
	m := kongNoValue.FindStringSubmatch(err.Error())
	switch {
	case m == nil:
		return err
	case m[3] == "EOL":
		return fmt.Errorf("%s needs a value, and it is the last word of the command line", m[1])
	}
	return err
}
