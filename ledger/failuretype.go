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

// DefaultThreshold is the number of consecutive failures that trips a circuit when no policy says
// otherwise: 1 for the types that never recover on retry, 3 for the rest.
func (t FailureType) DefaultThreshold() int {
	switch t {
	case AdminGated, Auth, NotFound:
		return 1
	}
	return 3
}

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
