package ledger

// FailureType is the class of a failure, as the skill names it. The zero value is not a valid type.
type FailureType string

// The failure types of docs/classification.md, in precedence order (highest first).
const (
	AdminGated FailureType = "ADMIN_GATED"
	Auth       FailureType = "AUTH"
	RateLimit  FailureType = "RATE_LIMIT"
	NotFound   FailureType = "NOT_FOUND"
	Timeout    FailureType = "TIMEOUT"
	Malformed  FailureType = "MALFORMED"
	Unknown    FailureType = "UNKNOWN"
)

// FailureTypes lists every valid type in precedence order, highest first.
var FailureTypes = []FailureType{AdminGated, Auth, RateLimit, NotFound, Timeout, Malformed, Unknown}

// Valid reports whether t is one of [FailureTypes].
func (t FailureType) Valid() bool {
	for _, v := range FailureTypes {
		if v == t {
			return true
		}
	}
	return false
}

// Rank returns the precedence rank of t (0 is the highest), or -1 when t is not valid.
func (t FailureType) Rank() int {
	switch t {
	case AdminGated:
		return 0
	case Auth:
		return 1
	case RateLimit:
		return 2
	case NotFound:
		return 3
	case Timeout:
		return 4
	case Malformed:
		return 5
	case Unknown:
		return 6
	}
	return -1
}

// Transient reports whether a later call of the same tool may succeed without anyone acting.
func (t FailureType) Transient() bool { return t == Timeout || t == RateLimit }

// ParseFailureType returns the FailureType spelled s (case-insensitive, "-" accepted for "_").
func ParseFailureType(s string) (FailureType, bool) {
	u := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c == '-' {
			c = '_'
		}
		u = append(u, c)
	}
	t := FailureType(u)
	return t, t.Valid()
}

// Fault says whose fault a failure is (docs/classification.md): only a failure that is not the
// call's own counts toward a trip.
type Fault string

// The faults, from the narrowest reach to the widest.
const (
	// FaultCall is this request's own: its target does not exist, it may not touch it, its
	// arguments are invalid, a business rule refused it. It never counts toward a trip.
	FaultCall Fault = "call"
	// FaultTool is the tool's: missing from its server, or broken for every input.
	FaultTool Fault = "tool"
	// FaultServer is the server's: transport, process, overload.
	FaultServer Fault = "server"
	// FaultCredential is the credentials': expired, invalid or revoked for every call.
	FaultCredential Fault = "credential"
	// FaultQuota is a rate limit or quota.
	FaultQuota Fault = "quota"
	// FaultAdmin is an admin's gate.
	FaultAdmin Fault = "admin"
)

// Faults lists every valid fault.
var Faults = []Fault{FaultCall, FaultTool, FaultServer, FaultCredential, FaultQuota, FaultAdmin}

// Valid reports whether f is one of [Faults].
func (f Fault) Valid() bool {
	for _, v := range Faults {
		if v == f {
			return true
		}
	}
	return false
}

// Counts reports whether a failure of fault f counts toward a trip: every fault but the call's.
// An unknown fault (an entry written before faults existed) counts.
func (f Fault) Counts() bool { return f != FaultCall }
