package states

import (
	"slices"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/timetext"
)

func TestMultiServer(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 11, 29, 12, 0, s, 0, time.UTC) }
	tests := []struct {
		name  string
		trips []Trip
		want  []string
	}{
		{"none", nil, nil},
		{"one server", []Trip{{"a", at(0)}}, nil},
		{"same server twice", []Trip{{"a", at(0)}, {"a", at(10)}}, nil},
		{"two within a minute", []Trip{{"b", at(50)}, {"a", at(0)}}, []string{"a", "b"}},
		{"exactly a minute apart", []Trip{{"a", at(0)}, {"b", at(60)}}, []string{"a", "b"}},
		{"too far apart", []Trip{{"a", at(0)}, {"b", at(61)}}, nil},
		{"a later group", []Trip{{"a", at(0)}, {"b", at(61)}, {"c", at(90)}}, []string{"b", "c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := MultiServer(tc.trips)
			if !slices.Equal(got, tc.want) {
				t.Errorf("MultiServer = %v, want %v", got, tc.want)
			}
		})
	}
	if !IsTransportCause("connection_refused") || IsTransportCause("tool_deadline") {
		t.Error("IsTransportCause: connection_refused is transport, tool_deadline is not")
	}
}

func TestCeilSecond(t *testing.T) {
	base := time.Date(2026, 11, 29, 12, 12, 49, 0, time.UTC)
	for _, tc := range []struct{ in, want time.Time }{
		{base, base},
		{base.Add(600 * time.Millisecond), base.Add(time.Second)},
		{base.Add(time.Nanosecond), base.Add(time.Second)},
	} {
		if got := timetext.CeilSecond(tc.in); !got.Equal(tc.want) {
			t.Errorf("timetext.CeilSecond(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
