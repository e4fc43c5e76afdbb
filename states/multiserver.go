package states

import (
	"sort"
	"time"
)

// transportCauses are the causes that mean a server could not be reached at all.
var transportCauses = map[string]bool{
	"connection_refused": true, "connection_closed": true, "connection_reset": true, "dns": true,
	"process_exited": true, "broken_pipe": true, "http_502": true, "http_503": true,
}

// IsTransportCause reports whether cause means the server could not be reached (docs/circuits.md).
func IsTransportCause(cause string) bool { return transportCauses[cause] }

// Trip is one server that opened, and when.
type Trip struct {
	Server string
	At     time.Time
}

// MultiServer is the skill's multi_server_failure escalation (docs/circuits.md): the first group of two or
// more servers that opened with transport causes within one minute of each other, whose likely
// cause is the local machine (network down, laptop asleep). It returns nil when there is none.
func MultiServer(trips []Trip) (servers []string, at time.Time) {
	sorted := append([]Trip(nil), trips...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].At.Before(sorted[j].At) })
	for i := range sorted {
		seen := map[string]bool{}
		var group []string
		for j := i; j < len(sorted) && sorted[j].At.Sub(sorted[i].At) <= time.Minute; j++ {
			if !seen[sorted[j].Server] {
				seen[sorted[j].Server] = true
				group = append(group, sorted[j].Server)
			}
		}
		if len(group) >= 2 {
			return group, sorted[i].At
		}
	}
	return nil, time.Time{}
}
