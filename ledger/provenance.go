package ledger

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

// The provenance of an entry (docs/security.md, "Provenance") says that this user's own gate wrote
// it: an HMAC-SHA-256 of the entry's encoding, keyed by a secret of the user's that no project
// holds. A cloned repository can commit a ledger, and a merge can bring in a teammate's, but
// neither can make an entry that checks against this user's key. Entries without a valid one still
// count (the skill's ledger is written by hand), but they never leave the machine, never hold a
// circuit until a person acts, and are named as unverified.

// ProvenanceKeyName is the provenance key file's name in the user's state directory.
const ProvenanceKeyName = "provenance.key"

// provenancePrefix starts every provenance value: the scheme's version, so that a later scheme
// never takes an old value for its own.
const provenancePrefix = "h1-"

// provenanceKeyLen is the key's length in bytes, and provenanceLen the MAC's kept bytes: 128 bits
// leave nothing to guess.
const (
	provenanceKeyLen = 32
	provenanceLen    = 16
)

// Provenance signs the entries a process writes and checks those it reads, with the user's key
// file at Path. Without a Path the key is the process's own, made at first use and never saved:
// what the process signs checks in it only, and nothing read from a file does (a test's store).
// A nil *Provenance signs nothing and checks nothing: a store left without one fails safe.
type Provenance struct {
	// Path is the user's key file; "" keeps the key in memory only.
	Path string
	// Create makes the key file (0600, its directory 0700) at the first Sign when it does not
	// exist; a Check never makes it (a reader with no key has nothing to check against).
	Create bool
	// Vet, when set, is asked before the key file is read or made; an error refuses the key (a
	// key file a repository's files may hold is one the repository chose).
	Vet func(path string) error

	mu  sync.Mutex
	key []byte
	err error
}

// UserProvenance is the provenance of the user whose key file is path, made at the first Sign
// when create is set.
func UserProvenance(path string, create bool) *Provenance {
	return &Provenance{Path: path, Create: create}
}

// NewProvenanceKey returns a provenance whose key is key, for tests and tools that hold one.
func NewProvenanceKey(key []byte) *Provenance {
	return &Provenance{key: append([]byte(nil), key...)}
}

// Key returns the key, loading it at the first call (and, with create and Create, making it when
// the file does not exist yet); an error says why entries cannot be signed or checked.
func (p *Provenance) Key(create bool) ([]byte, error) {
	if p == nil {
		return nil, errors.New("no provenance key")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.key != nil {
		return p.key, nil
	}
	if p.err != nil && !(create && p.Create && errors.Is(p.err, fs.ErrNotExist)) {
		return nil, p.err
	}
	p.key, p.err = p.load(create && p.Create)
	return p.key, p.err
}

func (p *Provenance) load(create bool) ([]byte, error) {
	if p.Path == "" {
		key := newKey()
		if key == nil {
			return nil, errors.New("make provenance key: no random source")
		}
		return key, nil
	}
	if !filepath.IsAbs(p.Path) {
		// A relative path names whatever the current directory (a repository) holds.
		return nil, fmt.Errorf("read provenance key %s: not an absolute path", p.Path)
	}
	if p.Vet != nil {
		if err := p.Vet(p.Path); err != nil {
			return nil, fmt.Errorf("read provenance key %s: %w", p.Path, err)
		}
	}
	key, err := readKey(p.Path)
	if errors.Is(err, fs.ErrNotExist) && create {
		return makeKey(p.Path)
	}
	return key, err
}

func newKey() []byte {
	key := make([]byte, provenanceKeyLen)
	if _, err := rand.Read(key); err != nil {
		return nil
	}
	return key
}

// readKey reads a key file: a regular file (never a link) holding the key in hex, the user's own
// and readable by no one else. The gate makes it 0600; git checks a committed file out 0644 (0664,
// 0755), and a file another user wrote is theirs: either is a key someone else chose or can read,
// with which they could sign entries as this user.
func readKey(path string) ([]byte, error) {
	if err := ownKeyFile(path); err != nil {
		return nil, fmt.Errorf("read provenance key %s: %w", path, err)
	}
	data, err := safefile.ReadRegular(path, 1<<10)
	if err != nil {
		return nil, fmt.Errorf("read provenance key: %w", err)
	}
	key, err := hex.DecodeString(string(trimSpace(data)))
	if err != nil || len(key) < provenanceKeyLen {
		return nil, fmt.Errorf("read provenance key %s: not %d bytes in hex", path, provenanceKeyLen)
	}
	return key, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// makeKey creates the key file. Many hooks may start at once on a new machine: each writes a key
// of its own to a temporary file and links it into place, which fails when another did first; the
// key in place is then the one every process reads.
func makeKey(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make provenance key: %w", err)
	}
	key := newKey()
	if key == nil {
		return nil, errors.New("make provenance key: no random source")
	}
	tmp, err := os.CreateTemp(dir, "."+ProvenanceKeyName+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("make provenance key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hex.EncodeToString(key) + "\n")
	if werr == nil {
		werr = tmp.Chmod(0o600)
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("make provenance key: %w", werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("make provenance key: %w", err)
	}
	return readKey(path)
}

// Sign gives e the provenance of this user's gate and marks it verified; without a key it marks e
// unverified, as it will read back (a process that cannot reach the user's key fails safe). An
// entry already signed keeps its provenance.
func (p *Provenance) Sign(e *Entry) {
	if e.Provenance != "" {
		return
	}
	key, err := p.Key(true)
	if err != nil {
		e.Verified = false
		return
	}
	e.Provenance = provenanceOf(key, *e)
	e.Verified = true
}

// Check sets e.Verified: whether its provenance is this user's gate's for exactly its content.
func (p *Provenance) Check(e *Entry) {
	e.Verified = false
	if len(e.Provenance) != len(provenancePrefix)+2*provenanceLen {
		return
	}
	key, err := p.Key(false)
	if err != nil {
		return
	}
	e.Verified = hmac.Equal([]byte(e.Provenance), []byte(provenanceOf(key, *e)))
}

// CheckAll checks every entry that a provenance can matter for: not the counters (blocked,
// would_block), which move no circuit's state.
func (p *Provenance) CheckAll(entries []Entry) {
	for i := range entries {
		if e := &entries[i]; e.Provenance != "" && e.Event != EventBlocked && e.Event != EventWouldBlock {
			p.Check(e)
		}
	}
}

// provenanceOf is the provenance value of e under key: the MAC of e as Encode writes it without
// its provenance, so that the same entry read back checks whatever file it was read from, and any
// change of a byte (a key added, a state edited) does not.
func provenanceOf(key []byte, e Entry) string {
	e.Provenance, e.Line = "", 0
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("mcp-circuit-breaker entry provenance v1\x00"))
	var buf [512]byte
	mac.Write(AppendEncoded(buf[:0], e))
	sum := mac.Sum(nil)
	return provenancePrefix + hex.EncodeToString(sum[:provenanceLen])
}
