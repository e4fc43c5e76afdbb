// Package timetext owns how times and waits are said to people and to the model: rounded up to a
// whole second, so that a printed time or wait never names a moment before the real one.
package timetext

import "time"

// CeilSecond rounds t up to a whole second in UTC: a time printed without fractions must never name
// a moment before the real one, or a call made at the printed time would still be denied.
func CeilSecond(t time.Time) time.Time {
	t = t.UTC()
	if r := t.Truncate(time.Second); !r.Equal(t) {
		return r.Add(time.Second)
	}
	return t
}

// Wait is how long from now until at, rounded up to a whole second; zero when at is not after now.
// It is the one rounding rule of every view that says "in 3s": a wait printed never ends before the
// real one, and two views printing the same instant print the same wait.
func Wait(now, at time.Time) time.Duration {
	d := at.Sub(now)
	if d <= 0 {
		return 0
	}
	if r := d.Truncate(time.Second); r != d {
		return r + time.Second
	}
	return d
}

// WaitText is Wait said in words: "now" when at is not after now, else "in 1m5s".
func WaitText(now, at time.Time) string {
	if w := Wait(now, at); w > 0 {
		return "in " + w.String()
	}
	return "now"
}
