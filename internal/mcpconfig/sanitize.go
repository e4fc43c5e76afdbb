package mcpconfig

import "strings"

// claudeAIPrefix marks claude.ai connector names, which Claude Code sanitizes more strictly.
const claudeAIPrefix = "claude.ai "

// Sanitize returns name as Claude Code writes it into tool names (services/mcp/normalization.ts,
// normalizeNameForMCP): every character outside [A-Za-z0-9_-] becomes '_', so
// "my.dotted server" becomes "my_dotted_server". Claude Code works on UTF-16 code units, so a
// character outside the Basic Multilingual Plane (an emoji) becomes "__". For names starting with
// "claude.ai " runs of '_' are then collapsed and a leading or trailing '_' removed, so that
// they cannot fake the "__" separator.
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

// ToolName returns the name Claude Code gives tool on server: "mcp__<server>__<tool>", both parts
// sanitized.
func ToolName(server, tool string) string {
	return "mcp__" + Sanitize(server) + "__" + Sanitize(tool)
}

// SplitToolName splits "mcp__<server>__<tool>" the way Claude Code does (mcpInfoFromString): the
// server is the part between the first and second "__", the tool everything after it (it may
// itself contain "__"). tool is empty when s has no tool part ("mcp__srv"), and "*" for a
// server-wide circuit key ("mcp__srv__*"). ok is false when s is not an MCP tool name.
func SplitToolName(s string) (server, tool string, ok bool) {
	parts := strings.Split(s, "__")
	if len(parts) < 2 || parts[0] != "mcp" || parts[1] == "" {
		return "", "", false
	}
	return parts[1], strings.Join(parts[2:], "__"), true
}
