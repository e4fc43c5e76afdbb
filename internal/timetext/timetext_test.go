package timetext

import (
	"testing"
	"time"
)

func TestWaitRoundsUp(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(-time.Second), "now"},
		{now, "now"},
		{now.Add(time.Millisecond), "in 1s"},
		{now.Add(65 * time.Second), "in 1m5s"},
		{now.Add(65*time.Second + time.Nanosecond), "in 1m6s"},
	} {
		if got := WaitText(now, tt.at); got != tt.want {
			t.Errorf("WaitText(%s) = %q, want %q", tt.at.Sub(now), got, tt.want)
		}
	}
	if got := CeilSecond(now.Add(time.Millisecond)); !got.Equal(now.Add(time.Second)) {
		t.Errorf("CeilSecond = %s", got)
	}
	if got := CeilSecond(now); !got.Equal(now) {
		t.Errorf("CeilSecond of a whole second = %s", got)
	}
}
