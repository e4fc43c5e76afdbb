package failure

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter caps every retry hint: an upstream that asks for a day still gets a trial within the
// hour (docs/circuits.md), and a garbled number cannot park a circuit forever.
const MaxRetryAfter = time.Hour

// RetryHint returns the first retry hint in text, or 0 when there is none. It understands
//
//	Retry-After: 30                          (seconds; also retry_after / retryAfter / "retry_after": 12)
//	Retry-After: Wed, 21 Oct 2015 07:28:00 GMT (an HTTP date, taken relative to now)
//	retry_after_seconds: 12, retry-after-ms: 1500
//	retry after 30s, retry in 5 seconds, try again in 2 minutes, try again in 1m30.5s
//
// A hint is positive and at most [MaxRetryAfter]; a zero, negative or past hint is skipped.
func RetryHint(text string, now time.Time) time.Duration {
	return retryHint(text, lowerASCII(text), now)
}

// retryHint is RetryHint for a text already lower-cased by lowerASCII.
func retryHint(text, lower string, now time.Time) time.Duration {
	for i := 0; i < len(lower); i++ {
		if c := lower[i]; c != 'r' && c != 't' || i > 0 && isAlnum(lower[i-1]) {
			continue
		}
		var d time.Duration
		switch {
		case strings.HasPrefix(lower[i:], "retry"):
			d = retryAt(text, lower, i+len("retry"), now)
		case strings.HasPrefix(lower[i:], "try again"):
			d = afterWord(text, lower, i+len("try again"), now)
		}
		if d > 0 {
			return min(d, MaxRetryAfter)
		}
	}
	return 0
}

// retryAt reads the hint after "retry" at p: a key (Retry-After, retry_after_seconds, retryAfterMs)
// and its value, or prose ("retry in 5 seconds", "retrying after 2m").
func retryAt(text, lower string, p int, now time.Time) time.Duration {
	q := p
	switch {
	case q+1 < len(lower) && (lower[q] == '-' || lower[q] == '_') && strings.HasPrefix(lower[q+1:], "after"):
		q += 1 + len("after")
	case strings.HasPrefix(lower[q:], "after"):
		q += len("after")
	default:
		if strings.HasPrefix(lower[q:], "ing") {
			q += len("ing")
		}
		return afterWord(text, lower, q, now)
	}
	unit := time.Second
	r := q
	if r < len(lower) && (lower[r] == '-' || lower[r] == '_') {
		r++
	}
	for _, suffix := range [...]struct {
		s string
		u time.Duration
	}{{"ms", time.Millisecond}, {"seconds", time.Second}, {"secs", time.Second}, {"sec", time.Second}} {
		if strings.HasPrefix(lower[r:], suffix.s) {
			unit, q = suffix.u, r+len(suffix.s)
			break
		}
	}
	if q < len(lower) && isAlnum(lower[q]) {
		return 0 // retry_afterwards, retry_after_count: not a hint
	}
	for q < len(lower) && strings.IndexByte(" \t\"':=", lower[q]) >= 0 {
		q++
	}
	return value(text[q:], lower[q:], unit, now)
}

// afterWord reads "[again] in|after <span>" at p, as in "try again in 2 minutes".
func afterWord(text, lower string, p int, now time.Time) time.Duration {
	q := skipSpaces(lower, p)
	if q == p {
		return 0
	}
	if strings.HasPrefix(lower[q:], "again ") {
		q = skipSpaces(lower, q+len("again"))
	}
	switch {
	case strings.HasPrefix(lower[q:], "in "), strings.HasPrefix(lower[q:], "in:"):
		q += len("in")
	case strings.HasPrefix(lower[q:], "after "), strings.HasPrefix(lower[q:], "after:"):
		q += len("after")
	default:
		return 0
	}
	if q < len(lower) && lower[q] == ':' {
		q++
	}
	q = skipSpaces(lower, q)
	return value(text[q:], lower[q:], time.Second, now)
}

// value reads a span ("30", "30s", "2 minutes", "1m30s") or an HTTP date at the start of text.
func value(text, lower string, unit time.Duration, now time.Time) time.Duration {
	if lower == "" {
		return 0
	}
	if isDigit(lower[0]) {
		return span(lower, unit)
	}
	if lower[0] >= 'a' && lower[0] <= 'z' {
		return httpDate(text, lower, now)
	}
	return 0
}

// span parses a number with an optional unit, or a run of them ("1m30.5s"), at the start of s. A bare
// number is in unit. The result is capped at MaxRetryAfter; 0 means no span.
func span(s string, unit time.Duration) time.Duration {
	total := 0.0
	for i, seg := 0, 0; ; seg++ {
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		if j == i {
			break
		}
		num, err := strconv.ParseFloat(s[i:j], 64)
		if err != nil && !math.IsInf(num, 1) {
			return 0 // a number too long for a float is +Inf with an error, and is capped below
		}
		k := j
		for k < len(s) && s[k] == ' ' {
			k++
		}
		l := k
		for l < len(s) && s[l] >= 'a' && s[l] <= 'z' {
			l++
		}
		u, known := unitOf(s[k:l])
		if !known {
			if seg > 0 {
				break // "1m30": the tail has no unit; keep what was read
			}
			if k == j && l > k {
				return 0 // "30x": letters glued to the number are not a unit we know
			}
			total = num * float64(unit)
			break
		}
		total += num * float64(u)
		i = l
		if k != j || i >= len(s) || !isDigit(s[i]) {
			break // "5 seconds" ends the span; "1m30s" goes on
		}
	}
	if total >= float64(MaxRetryAfter) {
		return MaxRetryAfter
	}
	return time.Duration(total)
}

func unitOf(s string) (time.Duration, bool) {
	switch s {
	case "ms", "msec", "msecs", "millisecond", "milliseconds":
		return time.Millisecond, true
	case "s", "sec", "secs", "second", "seconds":
		return time.Second, true
	case "m", "min", "mins", "minute", "minutes":
		return time.Minute, true
	case "h", "hr", "hrs", "hour", "hours":
		return time.Hour, true
	case "d", "day", "days":
		return 24 * time.Hour, true
	}
	return 0, false
}

// httpDate parses an RFC 9110 HTTP date (IMF-fixdate, RFC 850 or asctime) at the start of text and
// returns how far after now it is.
func httpDate(text, lower string, now time.Time) time.Duration {
	var t time.Time
	var err error
	if end := strings.Index(lower[:min(len(lower), 40)], "gmt"); end > 0 {
		cand := text[:end+len("gmt")]
		for _, layout := range [...]string{
			"Mon, 02 Jan 2006 15:04:05 GMT", "Mon, 2 Jan 2006 15:04:05 GMT", "Monday, 02-Jan-06 15:04:05 GMT",
		} {
			if t, err = time.Parse(layout, cand); err == nil {
				break
			}
		}
	} else if len(text) >= len(time.ANSIC) {
		t, err = time.Parse(time.ANSIC, text[:len(time.ANSIC)])
	} else {
		return 0
	}
	if err != nil {
		return 0
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	return min(d, MaxRetryAfter)
}

func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
