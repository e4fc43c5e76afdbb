package term

import "testing"

func TestIsControl(t *testing.T) {
	for _, r := range []rune{0, '\n', '\t', '\r', 0x1b, 0x7f, 0x85, 0x9b, 0x9d, 0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202e, 0x2066, 0x2069} {
		if !IsControl(r) {
			t.Errorf("IsControl(%U) = false", r)
		}
	}
	for _, r := range []rune{' ', 'a', 'é', '…', '—', '⚡', 0xa0, 0x200d, 0x2030, 0xfffd} {
		if IsControl(r) {
			t.Errorf("IsControl(%U) = true", r)
		}
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"ééééé", 4, "ééé…"},
		{"⚡⚡", 1, "…"},
		{"x", 0, ""},
		{"", 5, ""},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
