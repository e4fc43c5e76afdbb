package ledger

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func signedTrip(p *Provenance) Entry {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	e := Entry{Tool: "mcp__github__*", State: Open, FailureType: AdminGated, FailureCount: 1, TrippedAt: at,
		Event: EventTrip, At: at, Server: "github", Cause: "http_403", Error: `MCP error: "admin approval required"`,
		Source: SourceHook, Extra: []Field{{Key: "note", Value: "kept"}}}
	p.Sign(&e)
	return e
}

// readBack encodes e and reads it as a reader of the ledger does.
func readBack(t *testing.T, text []byte, p *Provenance) Entry {
	t.Helper()
	entries, problems := Parse(text, 1, nil)
	if len(problems) > 0 || len(entries) != 1 {
		t.Fatalf("parse %q: %v %v", text, entries, problems)
	}
	p.CheckAll(entries)
	return entries[0]
}

func TestProvenanceChecksOnlyWhatTheKeySigned(t *testing.T) {
	p := NewProvenanceKey(bytes.Repeat([]byte{7}, 32))
	e := signedTrip(p)
	if !e.Verified || !strings.HasPrefix(e.Provenance, provenancePrefix) {
		t.Fatalf("signed entry: verified %v, provenance %q", e.Verified, e.Provenance)
	}
	text := Encode(e)
	if !bytes.HasSuffix(text, []byte("  provenance: "+e.Provenance+"\n")) {
		t.Fatalf("the provenance is not the item's last line:\n%s", text)
	}
	if got := readBack(t, text, p); !got.Verified {
		t.Fatalf("the entry read back does not check:\n%s", text)
	}
	// Any change of the content, by a person or a clone, fails the check; so does another key.
	for name, edit := range map[string]func(string) string{
		"state": func(s string) string { return strings.Replace(s, "state: OPEN", "state: CLOSED", 1) },
		"type":  func(s string) string { return strings.Replace(s, "ADMIN_GATED", "AUTH", 1) },
		"tool":  func(s string) string { return strings.Replace(s, "github", "gitlab", 1) },
		"extra key": func(s string) string {
			return strings.Replace(s, "  provenance:", "  open_until: 2999-01-01T00:00:00.000Z\n  provenance:", 1)
		},
		"unknown key": func(s string) string { return strings.Replace(s, "note: kept", "note: other", 1) },
		"count":       func(s string) string { return strings.Replace(s, "failure_count: 1", "failure_count: 2", 1) },
	} {
		edited := edit(string(text))
		if edited == string(text) {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		if got := readBack(t, []byte(edited), p); got.Verified {
			t.Errorf("%s: an edited entry checks:\n%s", name, edited)
		}
	}
	other := NewProvenanceKey(bytes.Repeat([]byte{8}, 32))
	if got := readBack(t, text, other); got.Verified {
		t.Error("another user's key checks this user's entry")
	}
	// A hand-written entry, and one copied with a provenance of the right shape, do not check.
	hand := []byte("- tool: mcp__github__*\n  state: OPEN\n  failure_type: ADMIN_GATED\n  failure_count: 1\n  tripped_at: 2026-11-30T12:00:00Z\n  reset_at: null\n")
	if got := readBack(t, hand, p); got.Verified {
		t.Error("a hand-written entry checks")
	}
	forged := append(bytes.Clone(hand), []byte("  provenance: "+e.Provenance+"\n")...)
	if got := readBack(t, forged, p); got.Verified {
		t.Error("a provenance copied onto other content checks")
	}
	// No key: nothing checks, nothing is signed.
	var none *Provenance
	e2 := signedTrip(none)
	if e2.Verified || e2.Provenance != "" {
		t.Errorf("a nil provenance signed: %+v", e2)
	}
	if got := readBack(t, text, none); got.Verified {
		t.Error("a nil provenance checks")
	}
}

func TestProvenanceKeyFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "mcp-circuit-breaker")
	path := filepath.Join(dir, ProvenanceKeyName)
	// A reader that may not create, and a check, leave nothing behind.
	if _, err := UserProvenance(path, true).Key(false); err == nil {
		t.Fatal("a check made the key")
	}
	ro := UserProvenance(path, false)
	if _, err := ro.Key(true); err == nil {
		t.Fatal("a missing key file gave a key")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a reader created %s: %v", dir, err)
	}
	// Many first uses at once agree on one key, made 0600 in a 0700 directory.
	var wg sync.WaitGroup
	keys := make([][]byte, 16)
	for i := range keys {
		wg.Go(func() {
			k, err := UserProvenance(path, true).Key(true)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) || len(k) != provenanceKeyLen {
			t.Fatalf("first uses at once made different keys: %x vs %x", k, keys[0])
		}
	}
	for name, want := range map[string]os.FileMode{path: 0o600, dir: 0o700 | os.ModeDir} {
		fi, err := os.Stat(name)
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v (%v)", name, fi.Mode(), want, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// What one process signs, the next checks.
	e := signedTrip(UserProvenance(path, true))
	if got := readBack(t, Encode(e), UserProvenance(path, false)); !got.Verified {
		t.Error("an entry signed with the key file does not check in another process")
	}
	// A link in the key's place, a relative path or a short key gives no key.
	link := filepath.Join(t.TempDir(), ProvenanceKeyName)
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), ProvenanceKeyName)
	os.WriteFile(short, []byte("abcd\n"), 0o600)
	for _, bad := range []string{link, "state/" + ProvenanceKeyName, short} {
		if _, err := UserProvenance(bad, true).Key(true); err == nil {
			t.Errorf("%s gave a key", bad)
		}
	}
}

// TestProvenanceKeyOthersCanRead: a key file another user or a repository could have chosen
// gives no key. git checks a committed key out 0644, so a repository that holds the key's path
// (one checked out as a container's home directory) would otherwise sign its own entries.
func TestProvenanceKeyOthersCanRead(t *testing.T) {
	key := bytes.Repeat([]byte{9}, provenanceKeyLen)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		dir := filepath.Join(t.TempDir(), "state", "mcp-circuit-breaker")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, ProvenanceKeyName)
		if err := os.WriteFile(path, []byte(hexKey(key)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		// The repository signs its trip with the key it committed.
		text := Encode(signedTrip(NewProvenanceKey(key)))
		if got := readBack(t, text, UserProvenance(path, false)); got.Verified {
			t.Errorf("mode %04o: an entry signed with the committed key checks", mode)
		}
		if e := signedTrip(UserProvenance(path, true)); e.Verified || e.Provenance != "" {
			t.Errorf("mode %04o: the gate signed with a key others can read: %+v", mode, e)
		}
		if _, err := UserProvenance(path, true).Key(true); err == nil || !strings.Contains(err.Error(), "mode") {
			t.Errorf("mode %04o: the key's error does not say its mode: %v", mode, err)
		}
	}
	// The same key made 0600 by the user is theirs.
	path := filepath.Join(t.TempDir(), ProvenanceKeyName)
	if err := os.WriteFile(path, []byte(hexKey(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, Encode(signedTrip(NewProvenanceKey(key))), UserProvenance(path, false)); !got.Verified {
		t.Error("a 0600 key of the user's does not check")
	}
}

// TestProvenanceVet: a key the caller's Vet refuses is neither read nor made.
func TestProvenanceVet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", ProvenanceKeyName)
	p := UserProvenance(path, true)
	p.Vet = func(string) error { return os.ErrPermission }
	if e := signedTrip(p); e.Verified || e.Provenance != "" {
		t.Errorf("a refused key signed: %+v", e)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("a refused key was made: %v", err)
	}
}

func hexKey(k []byte) string { return hex.EncodeToString(k) }
