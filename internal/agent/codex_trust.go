package agent

// Codex CLI runs a hook only once the user trusted it: the user's config.toml keeps, per handler, a
// [hooks.state."<file>:<event>:<group>:<handler>"] table whose trusted_hash is the SHA-256 of the
// handler's normalized form; a handler with no matching hash is skipped without a word. Install
// writes those tables in a block of its own in config.toml, so that they can be replaced and
// removed without parsing the rest of the file.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CodexTrust is the trust state of one hook handler: its key and the hash Codex compares.
type CodexTrust struct {
	Key, Hash string
}

// codexSnakeEvent is an event's name as Codex writes it in trust keys: PreToolUse → pre_tool_use.
func codexSnakeEvent(event string) string {
	var b strings.Builder
	for i, r := range event {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CodexTrustHash is the hash Codex keeps for a trusted command handler: SHA-256 over the compact
// JSON, keys sorted, of {"event_name": <snake event>, "hooks": [{"async": false, "command": …,
// "timeout": …, "type": "command"}], "matcher": …} (no matcher key for a group without one).
func CodexTrustHash(event, matcher, command string, timeout int) string {
	id := map[string]any{"event_name": codexSnakeEvent(event),
		"hooks": []map[string]any{{"async": false, "command": command, "timeout": timeout, "type": "command"}}}
	if matcher != "" {
		id["matcher"] = matcher
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // serde_json escapes only quotes, backslashes and control characters
	enc.Encode(id)
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CodexTrustOf finds, in the hooks.json data at path (absolute, as Codex names it), the command
// handlers for which ours is true and returns their trust state.
func CodexTrustOf(path string, data []byte, ours func(command string) bool) ([]CodexTrust, error) {
	var doc struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type    string   `json:"type"`
				Command string   `json:"command"`
				Timeout *float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var out []CodexTrust
	for event, groups := range doc.Hooks {
		for gi, g := range groups {
			for hi, h := range g.Hooks {
				if h.Type != "command" || !ours(h.Command) {
					continue
				}
				timeout := 600 // Codex's default
				if h.Timeout != nil {
					timeout = int(*h.Timeout)
				}
				matcher := ""
				if g.Matcher != nil {
					matcher = *g.Matcher
				}
				out = append(out, CodexTrust{Key: fmt.Sprintf("%s:%s:%d:%d", path, codexSnakeEvent(event), gi, hi),
					Hash: CodexTrustHash(event, matcher, h.Command, timeout)})
			}
		}
	}
	return out, nil
}

// The lines around the block of config.toml that install owns.
const (
	codexBlockStart = "# >>> mcp-circuit-breaker: hook trust (written by 'mcp-circuit-breaker install --agent codex'; edits inside are replaced)"
	codexBlockEnd   = "# <<< mcp-circuit-breaker"
)

// CodexTrustConfig returns config.toml with its install block holding keep (the block's entries
// whose key does not start with replace) and add. A key already defined outside the block is
// not written again (TOML forbids a table twice, and Codex would not start): it is returned in
// outside, with whether the hash there matches. A key that cannot be written as a TOML string
// (not valid UTF-8) is an error.
func CodexTrustConfig(config []byte, replace string, add []CodexTrust) (out []byte, outside map[string]bool, err error) {
	before, block, after := splitCodexBlock(config)
	rest := string(before) + string(after)
	var entries []CodexTrust
	for _, e := range parseCodexBlock(block) {
		if !strings.HasPrefix(e.Key, replace) {
			entries = append(entries, e)
		}
	}
	outside = map[string]bool{}
	for _, e := range add {
		if e.Key == "" || !utf8.ValidString(e.Key) {
			return nil, nil, fmt.Errorf("the hook trust key %q is empty or not valid UTF-8", e.Key)
		}
		// A table of the user's for the key names it as a TOML string, as a header would.
		if strings.Contains(rest, tomlQuote(e.Key)) {
			outside[e.Key] = strings.Contains(rest, tomlQuote(e.Hash))
			continue
		}
		entries = append(entries, e)
	}
	// Sorted, so that the same hooks give the same bytes.
	sort.Slice(entries, func(i, j int) bool { return entries[i].Key < entries[j].Key })
	var b bytes.Buffer
	b.Write(bytes.TrimRight(before, "\n"))
	if len(entries) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(codexBlockStart + "\n")
		for _, e := range entries {
			fmt.Fprintf(&b, "[hooks.state.%s]\ntrusted_hash = %s\n", tomlQuote(e.Key), tomlQuote(e.Hash))
		}
		b.WriteString(codexBlockEnd + "\n")
	} else if b.Len() > 0 {
		b.WriteString("\n")
	}
	if a := bytes.TrimLeft(after, "\n"); len(a) > 0 {
		b.WriteString("\n")
		b.Write(a)
	}
	return b.Bytes(), outside, nil
}

// CodexTrusted returns the entries of config.toml's install block.
func CodexTrusted(config []byte) []CodexTrust {
	_, block, _ := splitCodexBlock(config)
	return parseCodexBlock(block)
}

// splitCodexBlock cuts config around the install block (its marker lines included in block).
func splitCodexBlock(config []byte) (before, block, after []byte) {
	start := bytes.Index(config, []byte(codexBlockStart))
	if start < 0 {
		return config, nil, nil
	}
	end := bytes.Index(config[start:], []byte(codexBlockEnd))
	if end < 0 {
		return config[:start], config[start:], nil
	}
	end += start + len(codexBlockEnd)
	if end < len(config) && config[end] == '\n' {
		end++
	}
	return config[:start], config[start:end], config[end:]
}

func parseCodexBlock(block []byte) []CodexTrust {
	var out []CodexTrust
	var key string
	for _, line := range strings.Split(string(block), "\n") {
		line = strings.TrimSpace(line)
		if k, ok := strings.CutPrefix(line, "[hooks.state."); ok {
			key = ""
			if k, ok = strings.CutSuffix(k, "]"); ok {
				key, _ = strconv.Unquote(k)
			}
			continue
		}
		if h, ok := strings.CutPrefix(line, "trusted_hash = "); ok && key != "" {
			if hash, err := strconv.Unquote(h); err == nil {
				out = append(out, CodexTrust{Key: key, Hash: hash})
			}
			key = ""
		}
	}
	return out
}

// tomlQuote is s as a TOML basic string (s is valid UTF-8): Go's quoting, whose escapes TOML
// reads the same, once \x escapes (which TOML lacks) are written as \u.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
