package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestInterspersed: every flag --help lists works wherever it is placed (issue 11).
func TestInterspersed(t *testing.T) {
	app := newApp(&Env{Getenv: func(string) string { return "" }})
	for _, tt := range []struct{ in, want string }{
		{"record T --error x", "record --error x -- T"},
		{"--dir D record T --type AUTH", "--dir D record --type AUTH -- T"},
		{"record --help T", "record --help"},
		{"record T -h", "record -h"},
		{"classify --error x --dir D", "--dir D classify --error x"},
		{"status --dir D", "status --dir D"},
		{"ledger compact --older-than 7d --dir D", "ledger compact --older-than 7d --dir D"},
		{"record T --error", "record --error"},
		{"record T -- --error", "record -- T --error"},
		{"record T --generate-bash-completion", "record T --generate-bash-completion"},
		{"nosuch a --b", "nosuch a --b"},
	} {
		got := interspersed(app, append([]string{"mcb"}, strings.Fields(tt.in)...))
		if want := append([]string{"mcb"}, strings.Fields(tt.want)...); !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", tt.in, got[1:], want[1:])
		}
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "1d12h": 36 * time.Hour, "36h": 36 * time.Hour, "90m": 90 * time.Minute, "0d": 0,
	} {
		if got, err := parseAge(in); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"7days", "d", "7d1x", "1w", "99999999999999999999d"} {
		if d, err := parseAge(in); err == nil {
			t.Errorf("parseAge(%q) = %v, want an error", in, d)
		}
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		15020 * time.Millisecond: "15.0s", 212 * time.Millisecond: "0.2s", 0: "0.0s",
		59940 * time.Millisecond: "59.9s", 125 * time.Second: "2m5s",
	} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestDoubleDash(t *testing.T) {
	for in, want := range map[string]string{
		"flag provided but not defined: -frob":                     "flag provided but not defined: --frob",
		"flag needs an argument: -older-than":                      "flag needs an argument: --older-than",
		`invalid value "x" for flag -status: parse error`:          `invalid value "x" for flag --status: parse error`,
		"flag provided but not defined: --already":                 "flag provided but not defined: --already",
		`invalid value "-1" for flag -code: value out of range -1`: `invalid value "-1" for flag --code: value out of range -1`,
	} {
		if got := doubleDash(in); got != want {
			t.Errorf("doubleDash(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"record", "status", "success", "check", "verify", "repair"}
	for in, want := range map[string]string{"statsu": "status", "stat": "status", "recrod": "record", "verfy": "verify", "zzzzzz": "", "x": ""} {
		if got := suggest(in, names); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLocal: instants the library packages write in UTC are shown in the local zone; other text
// is left alone.
func TestLocal(t *testing.T) {
	loc := time.FixedZone("IST", 5*3600+1800)
	e := &Env{Loc: loc}
	for in, want := range map[string]string{
		"at 2026-11-29T12:01:00Z (in 1m0s)":   "at 2026-11-29T17:31:00+05:30 (in 1m0s)",
		"before 2026-11-28T12:00:00.000Z":     "before 2026-11-28T17:30:00.000+05:30",
		"no time here, Z and 2026-11-29 only": "no time here, Z and 2026-11-29 only",
	} {
		if got := e.local(in); got != want {
			t.Errorf("local(%q) = %q, want %q", in, got, want)
		}
	}
}
