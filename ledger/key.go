package ledger

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
)

// Key is a circuit key in Claude Code's tool-name grammar: mcp__<server>__<tool> names one tool's
// circuit, mcp__<server>__* the server-wide circuit of every tool of server. Both parts are
// sanitized names (see [Sanitize]). Entry.Tool and the circuits' keys stay plain strings so that
// the ledger's YAML and the CLI's JSON keep their shapes; Key(s) gives them the grammar.
type Key string

const (
	// keyPrefix starts every MCP tool name Claude Code builds.
	keyPrefix = "mcp__"
	// keySep separates the server part from the tool part.
	keySep = "__"
	// serverTool is the tool part of a server-wide key.
	serverTool = "*"
	// claudeAIPrefix marks claude.ai connector names, which Claude Code sanitizes more strictly.
	claudeAIPrefix = "claude.ai "
)

// ErrNotKey is returned by [ParseKey] when a text is not an MCP tool key.
var ErrNotKey = errors.New("not an MCP tool name: want mcp__<server>__<tool>, or mcp__<server>__* for a whole server")

// CharError is returned by [ParseKey] when a key holds a space or a control character. Claude Code
// writes every such character of a name as '_', so a key holding one names no tool.
type CharError struct {
	Key  string
	Rune rune
}

// Error names the key and the character.
func (e *CharError) Error() string {
	return fmt.Sprintf("parse key %q: holds a space or control character (%U)", e.Key, e.Rune)
}

// ToolKey returns the key of tool on server, both already sanitized.
func ToolKey(server, tool string) Key { return Key(keyPrefix + server + keySep + tool) }

// ServerKey returns the server-wide key mcp__<server>__* of server, already sanitized.
func ServerKey(server string) Key { return ToolKey(server, serverTool) }

// NameKey returns the key of tool on server from their real names, both sanitized:
// "my.dotted server", "read file" → mcp__my_dotted_server__read_file. The server part is
// [SanitizeServer]'s, so that no server's name can read as another server's.
func NameKey(server, tool string) Key { return ToolKey(SanitizeServer(server), Sanitize(tool)) }

// SanitizeServer is the server part of the keys of the server name: [Sanitize]'s, with a '-' after
// every '_' that another '_' or the end follows. Claude Code writes "github__evil" and "github."
// (sanitized "github_") into tool names as they are, and mcp__github__evil__y or mcp__github___y
// split as server github (Split, as Claude Code splits them), so a server named so would trip the
// circuits of the server github. The inserted '-' keeps "__" out of the server part and its end
// off '_'; it only adds characters, so no other name becomes an ordinary name such as github.
func SanitizeServer(name string) string { return ServerPart(Sanitize(name)) }

// ServerPart is [SanitizeServer] for a name already sanitized.
func ServerPart(sanitized string) string {
	if !strings.Contains(sanitized, "__") && !strings.HasSuffix(sanitized, "_") {
		return sanitized
	}
	var b strings.Builder
	for i := 0; i < len(sanitized); i++ {
		b.WriteByte(sanitized[i])
		if sanitized[i] == '_' && (i+1 == len(sanitized) || sanitized[i+1] == '_') {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// ClaudeKey is the key of the tool Claude Code calls toolName when it names the tool's server
// server (hook stdin's mcp_server.name): toolName itself, unless the server's sanitized name holds
// "__" or ends in '_' (see [SanitizeServer]); then its server part is rewritten to the server's own.
func ClaudeKey(toolName, server string) string {
	if server == "" {
		return toolName
	}
	s := Sanitize(server)
	part := ServerPart(s)
	if part == s {
		return toolName
	}
	if tool, ok := strings.CutPrefix(toolName, keyPrefix+s+keySep); ok {
		return string(ToolKey(part, tool))
	}
	return toolName
}

// ParseKey checks that s is a key with a non-empty server and tool part and no space or control
// character (see [CharError]): the control characters are term.IsControl's, the one definition, so
// a bidi override or an invisible space cannot make a key the CLI takes look like another.
func ParseKey(s string) (Key, error) {
	rest, ok := strings.CutPrefix(s, keyPrefix)
	i := strings.Index(rest, keySep)
	if !ok || i <= 0 || i+len(keySep) >= len(rest) {
		return "", fmt.Errorf("parse key %q: %w", s, ErrNotKey)
	}
	for _, r := range s {
		if unicode.IsSpace(r) || term.IsControl(r) {
			return "", &CharError{Key: s, Rune: r}
		}
	}
	return Key(s), nil
}

// Split splits k the way Claude Code does (mcpInfoFromString): the server is the part between the
// first and second "__", the tool everything after it (tool names may hold "__"). tool is empty
// when k has no tool part (mcp__srv), and "*" for a server key. ok is false when k is not an MCP
// tool name (no mcp__ prefix, or an empty server part).
func (k Key) Split() (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(string(k), keyPrefix)
	if !ok {
		return "", "", false
	}
	server, tool, _ = strings.Cut(rest, keySep)
	if server == "" {
		return "", "", false
	}
	return server, tool, true
}

// IsMCP reports whether k is an MCP tool name at all, as opposed to a built-in tool such as Bash:
// whether it starts with mcp__, the test Claude Code itself makes. A name with an empty server part
// (mcp____x) is MCP but does not Split.
func (k Key) IsMCP() bool { return strings.HasPrefix(string(k), keyPrefix) }

// Server returns the sanitized server part of k: "s" for mcp__s__t and mcp__s__*; "" when k is not
// an MCP tool name.
func (k Key) Server() string {
	s, _, _ := k.Split()
	return s
}

// Tool returns the tool part of k: "t" for mcp__s__t, "*" for a server key, "" when there is none.
func (k Key) Tool() string {
	_, t, _ := k.Split()
	return t
}

// ServerKey returns the server-wide key of the server of k.
func (k Key) ServerKey() Key { return ServerKey(k.Server()) }

// Circuits returns the circuit keys a call of k is decided by: its own and its server's, or only
// its own when k is itself a server key.
func (k Key) Circuits() []string {
	if k.IsServer() {
		return []string{string(k)}
	}
	return []string{string(k), string(k.ServerKey())}
}

// IsServer reports whether k names a server-wide circuit (mcp__<server>__*).
func (k Key) IsServer() bool {
	return len(k) > len(keySep+serverTool) && strings.HasSuffix(string(k), keySep+serverTool)
}

// String returns k as text.
func (k Key) String() string { return string(k) }

// Sanitize returns name as Claude Code writes it into tool names (services/mcp/normalization.ts,
// normalizeNameForMCP): every character outside [A-Za-z0-9_-] becomes '_', so
// "my.dotted server" becomes "my_dotted_server". Claude Code works on UTF-16 code units, so a
// character outside the Basic Multilingual Plane (an emoji) becomes "__". For names starting with
// "claude.ai " (claude.ai connectors) runs of '_' are then collapsed and a leading or trailing '_'
// removed, so that they cannot fake the "__" separator: "claude.ai Google Drive." becomes
// "claude_ai_Google_Drive". (Claude Code 2.1.332 keeps that prefix as a constant and matches such
// names in their collapsed form.)
func Sanitize(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("__") // a surrogate pair: two code units
		default:
			b.WriteByte('_') // also one per invalid UTF-8 byte (decoded as RuneError)
		}
	}
	out := b.String()
	if strings.HasPrefix(name, claudeAIPrefix) {
		for strings.Contains(out, "__") {
			out = strings.ReplaceAll(out, "__", "_")
		}
		// The JS regex /^_|_$/g removes one underscore at each end; after collapsing there is
		// at most one.
		out = strings.TrimPrefix(out, "_")
		out = strings.TrimSuffix(out, "_")
	}
	return out
}

// MaxServerName bounds a server name we show: Claude Code's names are short labels.
const MaxServerName = 64

// ServerName returns name, the real name of the server of key (from a ledger entry's server:
// or hook stdin's mcp_server.name), when it is a server name Claude Code could have given that
// key: at most MaxServerName characters of letters, digits, '_', '-', '.', ':' (plugin servers)
// and single inner spaces, that sanitize to the key's server part. Anything else — a quote, a
// line break, words that are not the key's — is text someone wrote, not a name, and the key's
// server part is returned instead, so that a planted name cannot speak in our texts.
func ServerName(name string, key Key) string {
	server := key.Server()
	if name == "" || name == server {
		return server
	}
	if len(name) > MaxServerName || strings.HasPrefix(name, " ") || strings.HasSuffix(name, " ") || strings.Contains(name, "  ") {
		return server
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':' || c == ' ') {
			return server
		}
	}
	if SanitizeServer(name) != server {
		return server
	}
	return name
}
