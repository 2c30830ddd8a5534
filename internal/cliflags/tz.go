package cliflags

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// ZoneWarning says, when TZ (tz) names a time zone this program cannot read,
// that the times it writes in local time are in UTC (utc: what they are,
// "the run's stamps" for a tool's file names and run ids, "the log's
// times" for a service): such a zone was taken as UTC without a word,
// while date(1) may read it ("" otherwise). A path
// (TZ=/usr/share/zoneinfo/...) names a zone file, which must be one (a
// missing file was taken as UTC without a word too).
func ZoneWarning(tz, utc string) string {
	name := strings.TrimPrefix(tz, ":")
	if name == "" {
		return ""
	}
	if strings.HasPrefix(name, "/") {
		if err := zoneFile(name); err != nil {
			return fmt.Sprintf("TZ=%q names no time zone file this program can read (%v): %s are in UTC", tz, err, utc)
		}
		return ""
	}
	if _, err := time.LoadLocation(name); err == nil {
		return ""
	}
	return fmt.Sprintf("TZ=%q is not a time zone this program knows (a zone name such as Europe/Prague is): %s are in UTC", tz, utc)
}

// maxZoneFile bounds a zone file read (the largest in tzdata are a few
// KiB).
const maxZoneFile = 1 << 20

// zoneFile reads path as a time zone file (TZif), as Go's time package
// does for TZ=/path; nil when it is one.
func zoneFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxZoneFile))
	if err != nil {
		return err
	}
	if _, err := time.LoadLocationFromTZData(path, b); err != nil {
		return errors.New("not a time zone file")
	}
	return nil
}
