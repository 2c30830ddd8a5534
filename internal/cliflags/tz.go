package cliflags

import (
	"fmt"
	"strings"
	"time"
)

// ZoneWarning says, when TZ (tz) names a time zone this program cannot read,
// that the run's stamps (file names, run_id) are in UTC: such a zone was
// taken as UTC without a word, while date(1) may read it ("" otherwise). A
// path (TZ=/usr/share/zoneinfo/...) is the program's to read as it can.
func ZoneWarning(tz string) string {
	name := strings.TrimPrefix(tz, ":")
	if name == "" || strings.HasPrefix(name, "/") {
		return ""
	}
	if _, err := time.LoadLocation(name); err == nil {
		return ""
	}
	return fmt.Sprintf("TZ=%q is not a time zone this program knows (a zone name such as Europe/Prague is): the run's stamps are in UTC", tz)
}
