package respconn

import (
	"bufio"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		url         string
		want        target
		unsupported bool
		err         string
	}{
		{url: "redis://127.0.0.1:6380", want: target{seeds: []string{"127.0.0.1:6380"}}},
		{url: "redis://h", want: target{seeds: []string{"h:6379"}}},
		{url: "redis://", want: target{seeds: []string{"localhost:6379"}}},
		{url: "redis://:pw@[::1]:7000/2", want: target{pass: "pw", db: 2, seeds: []string{"[::1]:7000"}}},
		{url: "redis://alice:pw@h:1/", want: target{user: "alice", pass: "pw", seeds: []string{"h:1"}}},
		{url: "redis://:pw@h:1?addr=h:2&addr=[::1]:3", want: target{pass: "pw", cluster: true, seeds: []string{"h:1", "h:2", "[::1]:3"}}},
		{url: "redis://h:1/x", err: "invalid database number"},
		{url: "redis://h:1/1/2", err: "invalid URL path"},
		{url: "redis://h:1?addr=h", err: "unable to parse addr"},
		{url: "rediss://h:1", unsupported: true},
		{url: "redis://h:1?dial_timeout=1s", unsupported: true},
		{url: "redis://h:1/?db=2", unsupported: true},
	} {
		got, err := parse(tt.url)
		switch {
		case tt.unsupported:
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("parse(%s) = %v, want ErrUnsupported", tt.url, err)
			}
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || errors.Is(err, ErrUnsupported) {
				t.Errorf("parse(%s) = %v, want %q", tt.url, err, tt.err)
			}
		case err != nil || !reflect.DeepEqual(got, tt.want):
			t.Errorf("parse(%s) = %+v, %v; want %+v", tt.url, got, err, tt.want)
		}
	}
}

func TestUsable(t *testing.T) {
	for url, ok := range map[string]bool{
		"redis://127.0.0.1:6379":                     true,
		"redis://[::1]:6379?addr=127.0.0.1:2":        true,
		"redis://localhost:6379":                     true, // /etc/hosts
		"rediss://127.0.0.1:6379":                    false,
		"redis://no-such-host.invalid:6379":          false, // DNS: the full CLI's
		"redis://127.0.0.1:1?addr=no-such.invalid:2": false,
	} {
		err := Usable(url)
		if (err == nil) != ok || err != nil && !errors.Is(err, ErrUnsupported) {
			t.Errorf("Usable(%s) = %v, want usable %v", url, err, ok)
		}
	}
}

// TestSlot checks the key slots against the Redis Cluster specification's examples.
func TestSlot(t *testing.T) {
	if got := crc16("123456789"); got != 0x31C3 {
		t.Fatalf("crc16 = %#x, want 0x31c3", got)
	}
	for key, want := range map[string]int{"foo": 12182, "{user1000}.following": Slot("user1000"), "foo{}{bar}": Slot("foo{}{bar}"), "{}x": 0} {
		if key == "{}x" {
			want = int(crc16("{}x")) % 16384
		}
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestReadReply(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want any
		err  string
	}{
		{in: "+OK\r\n", want: "OK"},
		{in: ":-12\r\n", want: int64(-12)},
		{in: "$3\r\nabc\r\n", want: "abc"},
		{in: "$-1\r\n", want: nil},
		{in: "*3\r\n:1\r\n$-1\r\n*1\r\n$0\r\n\r\n", want: []any{int64(1), nil, []any{""}}},
		{in: "-NOSCRIPT No matching script\r\n", err: "NOSCRIPT No matching script"},
		{in: "$99999999999\r\n", err: "malformed bulk"},
		{in: "*2\r\n:1\r\n", err: "EOF"},
		{in: "?\r\n", err: "malformed"},
	} {
		got, err := readReply(bufio.NewReader(strings.NewReader(tt.in)), 0)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("readReply(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("readReply(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
		}
	}
}

func TestAppendCommand(t *testing.T) {
	got := string(appendCommand(nil, []any{"EVALSHA", "ab", 2, int64(-1)}))
	if want := "*4\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n2\r\n$2\r\n-1\r\n"; got != want {
		t.Fatalf("appendCommand = %q, want %q", got, want)
	}
}

// FuzzReadReply: a board's reply (a hostile one too) never panics the reader, and what it reads
// is one of the reply types.
func FuzzReadReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n$1\r\na\r\n:5\r\n", "$-1\r\n", "-ERR x\r\n", "*-1\r\n", "*9\r\n*9\r\n*9\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, _ := readReply(bufio.NewReader(strings.NewReader(in)), 0)
		var check func(any)
		check = func(v any) {
			switch x := v.(type) {
			case nil, string, int64, Error:
			case []any:
				for _, e := range x {
					check(e)
				}
			default:
				t.Fatalf("reply of type %T", v)
			}
		}
		check(v)
	})
}

// FuzzParse: any URL is parsed or refused, never panics, and a parsed one names a seed.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"redis://:pw@h:6379/0", "redis://h?addr=a:1&addr=[::1]:2", "rediss://h", "redis://[::1", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if tg, err := parse(in); err == nil && len(tg.seeds) == 0 {
			t.Fatalf("parse(%q) named no seed", in)
		}
	})
}
