package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// fullDecoder is the lean binary's project.Decoder: it links no YAML library, so it asks the full
// CLI (`mcp-circuit-breaker hook --decode KIND`) and keeps each answer in the user's cache
// directory under a hash of what was decoded. A policy.yaml or fallbacks.yaml is then decoded
// once per change, and an item in an unusual shape once, not on every call. The cache is the
// user's, never the project's: a cloned repository cannot plant an answer.
type fullDecoder struct {
	// bin finds the full CLI.
	bin func() (string, error)
	// cache names the directory of the answers, "" for none; it is asked for only when a
	// decoding is needed, since it reads HOME.
	cache func() string
	// items holds the ledger items Prefetch had read, by a hash of their text.
	items *itemMemo
	// getenv is the environment the gate obeys: where the user's cache is.
	getenv func(string) string
}

// itemMemo is what one process learned of ledger items in odd shapes, each read as from line 1.
type itemMemo struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]project.Decoded
}

func (m *itemMemo) get(text []byte) (project.Decoded, bool) {
	if m == nil {
		return project.Decoded{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.m[sha256.Sum256(text)]
	return d, ok
}

func (m *itemMemo) put(text []byte, d project.Decoded) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[[sha256.Size]byte]project.Decoded{}
	}
	m.m[sha256.Sum256(text)] = d
}

// maxPrefetch bounds the items one Prefetch sends the full CLI (a chunk of a ledger holds a few
// thousand): beyond it, the rest are read one by one, as without Prefetch.
const maxPrefetch = 20000

// prefetch reads every item of chunk that is not in the shape the ledger's own reader knows (a
// flow mapping, quoted keys: its first line is not "- tool: KEY") with one run of the full CLI, or
// from the one answer kept for exactly those items, and keeps the answers for Item. A committed
// ledger written in flow style is so read once, not with one process per item on every call.
func (d fullDecoder) prefetch(chunk []byte) {
	if d.items == nil {
		return
	}
	var odd [][]byte
	ledger.ScanItems(chunk, func(_ int, item []byte) bool {
		if _, ok := ledger.ItemTool(item); !ok && len(bytes.TrimSpace(item)) > 0 {
			if _, known := d.items.get(item); !known {
				odd = append(odd, item)
			}
		}
		return len(odd) < maxPrefetch
	})
	if len(odd) == 0 {
		return
	}
	texts := make([]string, len(odd))
	for i, t := range odd {
		texts[i] = string(t)
	}
	in, err := json.Marshal(texts)
	if err != nil {
		return
	}
	var out []project.Decoded
	if d.answer(project.DecodeItems, "", 1, in, &out) != nil || len(out) != len(odd) {
		return // each item is then asked for on its own
	}
	for i, t := range odd {
		d.items.put(t, out[i])
	}
}

// decoderCacheDir is where fullDecoder keeps its answers: decoded/ in our directory of the
// user's cache.
func decoderCacheDir(getenv func(string) string) string {
	base := project.UserCacheDir(getenv)
	if base == "" {
		return ""
	}
	return filepath.Join(base, "decoded")
}

// projectDecoderCache is decoderCacheDir for the project dir guards, looked up once: none when it
// lies in the project's git work tree (project.OutsideWorkTree), whose files a repository chose.
func projectDecoderCache(getenv func(string) string, dir string) func() string {
	return sync.OnceValue(func() string {
		c := decoderCacheDir(getenv)
		if c != "" && project.OutsideWorkTree(c, dir) != nil {
			return ""
		}
		return c
	})
}

// decoder is d as the project's Decoder.
func (d fullDecoder) decoder() project.Decoder {
	return project.Decoder{
		Policy: func(name string, data []byte) (*states.Policy, error) {
			r, err := d.decode(project.DecodePolicy, name, 1, data)
			if err != nil {
				return nil, err
			}
			return r.PolicyResult()
		},
		Catalog: func(name string, data []byte) (*fallbacks.Catalog, error) {
			r, err := d.decode(project.DecodeCatalog, name, 1, data)
			if err != nil {
				return nil, err
			}
			return r.CatalogResult()
		},
		Prefetch: d.prefetch,
		Item: func(text []byte, line int) (ledger.Entry, *ledger.Problem) {
			if r, ok := d.items.get(text); ok {
				// Read as from line 1: its lines are moved to where the item is.
				e, p := r.ItemResult()
				e.Line = line
				if p != nil {
					pp := *p
					pp.Line += line - 1
					p = &pp
				}
				return e, p
			}
			r, err := d.decode(project.DecodeItem, "", line, text)
			if err != nil {
				// Unread, not let through: the item is left out as damage, said with the reason.
				return ledger.Entry{}, &ledger.Problem{Line: line, Kind: ledger.Invalid,
					Msg: "not in the shape mcp-circuit-breaker writes, and " + err.Error()}
			}
			return r.ItemResult()
		},
	}
}

// decode returns the full CLI's answer for data of kind, from the cache when it has it.
func (d fullDecoder) decode(kind, name string, line int, data []byte) (project.Decoded, error) {
	var out project.Decoded
	err := d.answer(kind, name, line, data, &out)
	return out, err
}

// answer decodes into out the full CLI's answer for data of kind, from the cache when it has it.
func (d fullDecoder) answer(kind, name string, line int, data []byte, out any) error {
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%d\x00", kind, name, line)
	sum.Write(data)
	path, dir := "", d.cache()
	if dir != "" {
		path = filepath.Join(dir, hex.EncodeToString(sum.Sum(nil))+".json")
		if cached, err := safefile.ReadBounded(path, maxCached); err == nil && json.Unmarshal(cached, out) == nil {
			return nil
		}
	}
	bin, err := d.bin()
	if err != nil {
		return fmt.Errorf("cannot be read here: %w", err)
	}
	args := []string{"hook", "--decode", kind, "--decode-name", name, "--decode-line", strconv.Itoa(line)}
	if path != "" {
		// The full CLI keeps the answer itself before it prints it: when this hook runs out of
		// its budget and exits first, the work is not lost, and the next call reads it.
		args = append(args, "--decode-keep", path)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(data)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	answer, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s could not read it: %v: %s", bin, err, project.Clip(errorLine(stderr.String()+"\n"), 300))
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("%s answered what is not its decoding: %v", bin, err)
	}
	if path != "" {
		if _, err := os.Lstat(path); err != nil {
			KeepDecoded(path, answer, d.getenv) // an older full CLI that does not keep it
		}
	}
	return nil
}

// KeepDecoded keeps answer, the full CLI's decoding, at path in the decoded-answer cache, which it
// then keeps within its bounds. Only a path in that cache of the user (decoded/ in
// UserCacheDir's, named by a hash) is written: the full CLI is told where by the lean hook.
func KeepDecoded(path string, answer []byte, getenv func(string) string) {
	dir := decoderCacheDir(getenv)
	if dir == "" || filepath.Dir(path) != dir || !strings.HasSuffix(path, ".json") || len(answer) > maxCached {
		return
	}
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	if safefile.WriteFileAtomic(path, answer, 0o600) == nil { // a cache: a failed write costs the next call a decoding
		pruneCache(dir, path)
	}
}

// Bounds of the decoded-answer cache: a cloned repository can change its policy.yaml or its
// ledger's odd items on every commit, and each change is an answer; past these the oldest go.
const (
	maxCached      = 16 << 20
	maxCacheFiles  = 256
	maxCacheBytes  = 64 << 20
	cacheKeepShare = 3 // of 4: what pruning leaves, so that it runs seldom
)

// pruneCache removes the oldest answers of dir (by modification time; a read does not renew
// one) while it holds more than maxCacheFiles or maxCacheBytes, down to cacheKeepShare/4 of them,
// keeping keep, the one just written.
func pruneCache(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		size int64
		mod  time.Time
	}
	var files []file
	var total int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		files = append(files, file{filepath.Join(dir, e.Name()), fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	if len(files) <= maxCacheFiles && total <= maxCacheBytes {
		return
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	n := len(files)
	for _, f := range files {
		if n <= maxCacheFiles*cacheKeepShare/4 && total <= maxCacheBytes*cacheKeepShare/4 {
			break
		}
		if f.name == keep {
			continue
		}
		if os.Remove(f.name) == nil {
			n--
			total -= f.size
		}
	}
}
