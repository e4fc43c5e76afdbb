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
	"strconv"
	"strings"

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
		Item: func(text []byte, line int) (ledger.Entry, *ledger.Problem) {
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
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%d\x00", kind, name, line)
	sum.Write(data)
	path, dir := "", d.cache()
	if dir != "" {
		path = filepath.Join(dir, hex.EncodeToString(sum.Sum(nil))+".json")
		if cached, err := safefile.ReadBounded(path, 16<<20); err == nil && json.Unmarshal(cached, &out) == nil {
			return out, nil
		}
	}
	bin, err := d.bin()
	if err != nil {
		return out, fmt.Errorf("cannot be read here: %w", err)
	}
	cmd := exec.Command(bin, "hook", "--decode", kind, "--decode-name", name, "--decode-line", strconv.Itoa(line))
	cmd.Stdin = bytes.NewReader(data)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	answer, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s could not read it: %v: %s", bin, err, project.Clip(errorLine(stderr.String()+"\n"), 300))
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return out, fmt.Errorf("%s answered what is not its decoding: %v", bin, err)
	}
	if path != "" && os.MkdirAll(dir, 0o700) == nil {
		safefile.WriteFileAtomic(path, answer, 0o600) // a cache: a failed write costs the next call a decoding
	}
	return out, nil
}
