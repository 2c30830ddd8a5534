package licence

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"archivekit/internal/config"
	"archivekit/internal/resources"
)

// Always is the counts_when condition of a component that counts in every run.
const Always = "always"

// Component is one declared component of a tool.
type Component struct {
	// Name is the section name in the components file.
	Name string
	// License is the licence string as declared.
	License string
	// URL is the declared licence URL, or the table's URL when not declared.
	URL string
	// When lists the conditions under which the component counts; it
	// contains Always for components that always count.
	When []string
	// Description is free text for people reading the run metadata.
	Description string
}

// Components is the parsed components file of one tool.
type Components struct {
	// Path is the file the components came from.
	Path   string
	list   []Component
	byName map[string]Component
}

// LoadComponents reads a components file (see the package comment).
func LoadComponents(path string) (*Components, error) {
	ini, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	return FromINI(ini)
}

// ParseComponents parses a components file from r; path names it in errors.
func ParseComponents(path string, r io.Reader) (*Components, error) {
	ini, err := config.Parse(path, r)
	if err != nil {
		return nil, err
	}
	return FromINI(ini)
}

// ReadComponents reads the components file f that internal/resources found
// (a file on disk or the embedded copy); errors name it.
func ReadComponents(f resources.File) (*Components, error) {
	data, err := f.ReadFile()
	if err != nil {
		return nil, err
	}
	return ParseComponents(f.Path, bytes.NewReader(data))
}

// ToolSection is the section of a components file that names the tool and
// its version (read by the release gate); it is not a component.
const ToolSection = "tool"

// FromINI builds the components from a parsed INI file, one section per
// component except [tool]. Every component section must set license and
// counts_when.
func FromINI(ini *config.File) (*Components, error) {
	path := ini.Path
	c := &Components{Path: path, byName: map[string]Component{}}
	for _, name := range ini.Sections() {
		if name == ToolSection {
			continue
		}
		lic, ok := ini.Get(name, "license")
		if !ok || strings.TrimSpace(lic) == "" {
			return nil, fmt.Errorf("%s: [%s]: missing key license", path, name)
		}
		when, ok := ini.Get(name, "counts_when")
		if !ok || strings.TrimSpace(when) == "" {
			return nil, fmt.Errorf("%s: [%s]: missing key counts_when (use %q for a component that always counts)", path, name, Always)
		}
		comp := Component{Name: name, License: strings.TrimSpace(lic), Description: ini.String(name, "description", "")}
		for _, w := range strings.Split(when, ",") {
			if w = strings.ToLower(strings.TrimSpace(w)); w != "" {
				comp.When = append(comp.When, w)
			}
		}
		comp.URL = ini.String(name, "license_url", "")
		if comp.URL == "" {
			if l, ok := Lookup(comp.License); ok {
				comp.URL = l.URL
			}
		}
		c.list = append(c.list, comp)
		c.byName[name] = comp
	}
	return c, nil
}

// All returns the declared components in file order.
func (c *Components) All() []Component {
	return append([]Component(nil), c.list...)
}

// Get returns the named component.
func (c *Components) Get(name string) (Component, bool) {
	comp, ok := c.byName[name]
	return comp, ok
}

// Add declares one more component, or replaces the one of the same name:
// for example a model whose licence comes from its own metadata. An empty
// URL is taken from the table.
func (c *Components) Add(comp Component) {
	if comp.URL == "" {
		if l, ok := Lookup(comp.License); ok {
			comp.URL = l.URL
		}
	}
	if _, ok := c.byName[comp.Name]; ok {
		for i := range c.list {
			if c.list[i].Name == comp.Name {
				c.list[i] = comp
			}
		}
	} else {
		c.list = append(c.list, comp)
	}
	c.byName[comp.Name] = comp
}

// Counting returns, in file order, the names of the components that count
// when the given conditions hold: those whose counts_when contains Always or
// any of the conditions (compared case-insensitively).
func (c *Components) Counting(conditions ...string) []string {
	active := map[string]bool{Always: true}
	for _, k := range conditions {
		active[strings.ToLower(strings.TrimSpace(k))] = true
	}
	var out []string
	for _, comp := range c.list {
		for _, w := range comp.When {
			if active[w] {
				out = append(out, comp.Name)
				break
			}
		}
	}
	return out
}

// ComponentResult is one counted component in a Resolution.
type ComponentResult struct {
	Name string `json:"name"`
	Licence
	// Declared is false for a component missing from the components file.
	Declared bool `json:"declared"`
	// Recognised is false when the licence string is not in the table.
	Recognised bool `json:"recognised"`
}

// Resolution is the effective licence of a run with its derivation. Its JSON
// form is the "license_detail" block of the run metadata.
type Resolution struct {
	EffectiveLicense    string `json:"effective_license"`
	EffectiveLicenseURL string `json:"effective_license_url"`
	Rank                int    `json:"rank"`
	// The flags are the union over all counted components.
	IsNonCommercial bool `json:"is_non_commercial"`
	IsShareAlike    bool `json:"is_share_alike"`
	IsCopyleft      bool `json:"is_copyleft"`
	// DeterminedBy names the components whose licence is the effective one.
	DeterminedBy []string          `json:"determined_by"`
	Components   []ComponentResult `json:"components"`
	// UnknownLicenses lists unrecognised licence strings and UNKNOWN for
	// undeclared components.
	UnknownLicenses []string `json:"unknown_licenses"`
	Warnings        []string `json:"warnings"`
	Notes           string   `json:"notes"`
}

// Resolve returns the most restrictive licence among the named components.
// A name not declared in the file counts as a component with licence UNKNOWN.
// Duplicate names count once. With no components at all the result is
// UNKNOWN with a warning, since nothing says what the output may be used for.
// Among components of equal top rank but different licences, the one named
// first wins and a warning lists the others.
func (c *Components) Resolve(names ...string) Resolution {
	res := Resolution{DeterminedBy: []string{}, Components: []ComponentResult{}, UnknownLicenses: []string{}, Warnings: []string{}}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		cr := ComponentResult{Name: n}
		comp, declared := c.byName[n]
		cr.Declared = declared
		if !declared {
			cr.Licence, _ = Lookup(Unknown)
			res.Warnings = append(res.Warnings, fmt.Sprintf("component %q is not declared in %s; its licence is UNKNOWN and ranked highest (non-commercial, share-alike)", n, c.Path))
		} else {
			cr.Licence, cr.Recognised = Lookup(comp.License)
			if comp.URL != "" {
				cr.URL = comp.URL
			}
			if !cr.Recognised {
				res.Warnings = append(res.Warnings, fmt.Sprintf("component %q has unrecognised licence %q; ranked highest and treated as non-commercial and share-alike", n, comp.License))
			}
		}
		if !cr.Recognised && !containsString(res.UnknownLicenses, cr.ID) {
			res.UnknownLicenses = append(res.UnknownLicenses, cr.ID)
		}
		res.Components = append(res.Components, cr)
	}
	if len(res.Components) == 0 {
		l, _ := Lookup(Unknown)
		res.EffectiveLicense, res.Rank = l.ID, l.Rank
		res.IsNonCommercial, res.IsShareAlike, res.IsCopyleft = true, true, true
		res.UnknownLicenses = append(res.UnknownLicenses, Unknown)
		res.Warnings = append(res.Warnings, "no licence components counted in this run; effective licence is UNKNOWN")
		res.Notes = "No components counted; the output licence is unknown."
		return res
	}
	top := res.Components[0]
	for _, cr := range res.Components[1:] {
		if cr.Rank > top.Rank {
			top = cr
		}
	}
	res.EffectiveLicense, res.EffectiveLicenseURL, res.Rank = top.ID, top.URL, top.Rank
	var tied []string
	for _, cr := range res.Components {
		res.IsNonCommercial = res.IsNonCommercial || cr.NonCommercial
		res.IsShareAlike = res.IsShareAlike || cr.ShareAlike
		res.IsCopyleft = res.IsCopyleft || cr.Copyleft
		switch {
		case cr.ID == top.ID:
			res.DeterminedBy = append(res.DeterminedBy, cr.Name)
		case cr.Rank == top.Rank:
			tied = append(tied, fmt.Sprintf("%s (%s)", cr.Name, cr.ID))
		}
	}
	if len(tied) > 0 {
		sort.Strings(tied)
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s ranks equal to %s; its terms apply as well", strings.Join(tied, ", "), top.ID))
	}
	for _, cr := range res.Components {
		var extra []string
		if cr.NonCommercial && !top.NonCommercial {
			extra = append(extra, "non-commercial")
		}
		if cr.ShareAlike && !top.ShareAlike {
			extra = append(extra, "share-alike")
		}
		if cr.Copyleft && !top.Copyleft {
			extra = append(extra, "copyleft")
		}
		if len(extra) > 0 && cr.ID != top.ID {
			res.Warnings = append(res.Warnings, fmt.Sprintf("component %q (%s) adds %s obligations not expressed by %s; they still apply", cr.Name, cr.ID, strings.Join(extra, " and "), top.ID))
		}
	}
	res.Notes = fmt.Sprintf("Effective output license is %s, the most restrictive among %d component(s) used.", top.ID, len(res.Components))
	return res
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
