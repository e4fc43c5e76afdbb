#!/bin/sh
# SessionStart hook of the mcp-circuit-breaker plugin.
#
# The other hooks of the plugin run ${CLAUDE_PLUGIN_DATA}/mcp-circuit-breaker-hook, a link that
# 'mcp-circuit-breaker install --plugin' makes to the installed binary: never a name looked up on
# PATH, which a repository's .claude/settings.json "env" can set to run its own program. When that
# link is missing Claude Code treats each of those hooks as a non-blocking error and lets every call
# through, so the gate would be off without a word. This script is the one place that notices: it
# runs the gate when the link is there, and otherwise tells the user (systemMessage) and the model
# (additionalContext) that circuits are not enforced, and how to fix it. It uses shell builtins
# only, for the same reason: no program is looked up on PATH.
gate="${CLAUDE_PLUGIN_DATA}/mcp-circuit-breaker-hook"
if [ -n "${CLAUDE_PLUGIN_DATA}" ] && [ -f "$gate" ] && [ -x "$gate" ]; then
	exec "$gate" hook
fi
while IFS= read -r _line; do :; done
msg='mcp-circuit-breaker: WARNING: the gate binary mcp-circuit-breaker-hook is not linked into the plugin'"'"'s data directory, so the plugin cannot block broken MCP tools and records nothing. Install the binaries (go install github.com/mcp-circuit-breaker/mcp-circuit-breaker/cmd/...@latest, or go install ./cmd/... in a clone), run mcp-circuit-breaker install --plugin once, then restart the session.'
ctx='mcp-circuit-breaker: the circuit-breaker gate is NOT running in this session (its binary mcp-circuit-breaker-hook is not installed for the plugin), so failing MCP tools are not blocked. Tell the user once if an MCP tool keeps failing, and do not retry a failing MCP tool more than twice.'
printf '%s\n' "$msg" >&2
printf '{"systemMessage": "%s", "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "%s"}}\n' "$msg" "$ctx"
exit 0
