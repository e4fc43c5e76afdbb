#!/bin/sh
# SessionStart hook of the mcp-circuit-breaker plugin.
#
# The other hooks of the plugin run mcp-circuit-breaker-hook straight from PATH, which keeps the check
# before every MCP call at one process start. When that binary is missing Claude Code treats each of
# those hooks as a non-blocking error and lets every call through, so the gate would be off without a
# word. This script is the one place that notices: it runs the gate when the binary is there, and
# otherwise tells the user (systemMessage) and the model (additionalContext) that circuits are not
# enforced, and how to fix it.
if command -v mcp-circuit-breaker-hook >/dev/null 2>&1; then
	exec mcp-circuit-breaker-hook hook
fi
cat >/dev/null
msg='mcp-circuit-breaker: WARNING: the gate binary mcp-circuit-breaker-hook is not on PATH, so the plugin cannot block broken MCP tools and records nothing. Install it: go install github.com/mcp-circuit-breaker/mcp-circuit-breaker/cmd/...@latest (or go install ./cmd/... in a clone), make sure $(go env GOPATH)/bin is on the PATH Claude Code starts with, then restart the session.'
ctx='mcp-circuit-breaker: the circuit-breaker gate is NOT running in this session (its binary mcp-circuit-breaker-hook is not installed), so failing MCP tools are not blocked. Tell the user once if an MCP tool keeps failing, and do not retry a failing MCP tool more than twice.'
printf '%s\n' "$msg" >&2
printf '{"systemMessage": "%s", "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "%s"}}\n' "$msg" "$ctx"
exit 0
