package claude

import (
	"bytes"
	"encoding/json"
)

// Answer is the JSON a hook prints on stdout (docs/hook.md). Fields are in the
// order Claude Code documents them, so the output is stable byte for byte.
type Answer struct {
	HookSpecificOutput *Specific `json:"hookSpecificOutput,omitempty"`
	// SystemMessage is shown to the user, not to the model.
	SystemMessage string `json:"systemMessage,omitempty"`
}

// Specific is the event-specific part of an answer.
type Specific struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

// Deny is a PreToolUse answer that blocks the call; reason is shown to the model.
func Deny(reason string) Answer {
	return Answer{HookSpecificOutput: &Specific{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// Context is an answer that adds text to the model's context after event (PreToolUse without a
// decision, PostToolUse, PostToolUseFailure, SessionStart).
func Context(event, text string) Answer {
	return Answer{HookSpecificOutput: &Specific{HookEventName: event, AdditionalContext: text}}
}

// Encode returns the answer as one line of JSON with a newline; an empty answer encodes as nothing,
// because an allowed call with nothing to say prints nothing.
func (a Answer) Encode() []byte {
	if a.HookSpecificOutput == nil && a.SystemMessage == "" {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// The reason is read by a model, not a browser: keep <, > and & readable.
	enc.SetEscapeHTML(false)
	if enc.Encode(a) != nil {
		return nil
	}
	return b.Bytes()
}
