package docrecord

import (
	"fmt"
	"strings"
	"time"

	"archivekit/internal/licence"
)

// Contributor is one tool run in the provenance block's contributors list.
type Contributor struct {
	Program string `json:"program"`
	Version string `json:"version,omitempty"`
	RunID   string `json:"run_id"`
	// At is when the run wrote the record (RFC 3339, UTC).
	At          string `json:"at"`
	ParadataRef string `json:"paradata_ref,omitempty"`
	// Blocks names the blocks the run wrote, comma-separated.
	Blocks string `json:"blocks,omitempty"`
	// License is the licence the run's output resolved to, LicenseURL its
	// URL.
	License    string `json:"license"`
	LicenseURL string `json:"license_url,omitempty"`
	// ContainerImage and RunnerRef are set inside the published images.
	ContainerImage string `json:"container_image,omitempty"`
	RunnerRef      string `json:"runner_ref,omitempty"`
}

// NewContributor fills a Contributor; at is written in UTC to the second.
func NewContributor(program, version, runID string, at time.Time, lic licence.Resolution, blocks ...string) Contributor {
	return Contributor{Program: program, Version: version, RunID: runID, At: at.UTC().Format(time.RFC3339),
		Blocks: strings.Join(blocks, ","), License: lic.EffectiveLicense, LicenseURL: lic.EffectiveLicenseURL}
}

// AddProvenance records a tool run in the provenance block: its entry in
// provenance.contributors replaces one of the same program and run_id (a
// rerun of the same run) or is appended, other entries are kept as they
// are, and provenance.license, license_url and license_detail are
// recomputed over every contributor's licence: the most restrictive wins
// (internal/licence ranking; an unrecognised licence ranks highest). Other members
// of the block, and every other block, are left as they were.
func (r *Record) AddProvenance(c Contributor) error {
	if c.Program == "" || c.RunID == "" || c.At == "" {
		return fmt.Errorf("provenance: a contributor needs program, run_id and at")
	}
	if c.License == "" {
		return fmt.Errorf("provenance: run %s of %s has no licence", c.RunID, c.Program)
	}
	prov := NewObject()
	if v, ok := r.root.Get("provenance"); ok {
		o, isObj := v.(*Object)
		if !isObj {
			return fmt.Errorf("%w: provenance is %s, not an object", ErrBaseline, kind(v))
		}
		prov = o
	}
	var list []any
	if v, ok := prov.Get("contributors"); ok {
		arr, isArr := v.([]any)
		if !isArr {
			return fmt.Errorf("%w: provenance.contributors is %s, not an array", ErrBaseline, kind(v))
		}
		list = arr
	}
	entry, err := toOrdered(c)
	if err != nil {
		return err
	}
	replaced := false
	for i, e := range list {
		if o, ok := e.(*Object); ok && str(o, "program") == c.Program && str(o, "run_id") == c.RunID {
			list[i], replaced = entry, true
		}
	}
	if !replaced {
		list = append(list, entry)
	}
	prov.Set("contributors", list)

	// The effective licence over every contributor that states one.
	type lic struct {
		l   licence.Licence
		url string
		by  string
	}
	var top *lic
	var determined []string
	for _, e := range list {
		o, ok := e.(*Object)
		if !ok || str(o, "license") == "" {
			continue
		}
		l, _ := licence.Lookup(str(o, "license"))
		cur := &lic{l: l, url: str(o, "license_url"), by: str(o, "program")}
		if cur.url == "" {
			cur.url = l.URL
		}
		switch {
		case top == nil || l.Rank > top.l.Rank:
			top, determined = cur, []string{cur.by}
		case l.ID == top.l.ID && !contains(determined, cur.by):
			determined = append(determined, cur.by)
		}
	}
	detail := NewObject()
	detail.Set("effective_license", top.l.ID)
	detail.Set("effective_license_url", top.url)
	detail.Set("is_non_commercial", top.l.NonCommercial)
	detail.Set("is_share_alike", top.l.ShareAlike)
	by := make([]any, len(determined))
	for i, d := range determined {
		by[i] = d
	}
	detail.Set("determined_by", by)
	detail.Set("notes", fmt.Sprintf("The most restrictive licence among %d contributing run(s).", len(list)))
	prov.Set("license", top.l.ID)
	prov.Set("license_url", top.url)
	prov.Set("license_detail", detail)
	r.root.Set("provenance", prov)
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func str(o *Object, key string) string {
	v, _ := o.Get(key)
	s, _ := v.(string)
	return s
}
